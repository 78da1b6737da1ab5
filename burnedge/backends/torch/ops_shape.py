"""Shape, movement, indexing and padding ops in torch (the registry's shape_ops.py, gather_scatter.py, pad.py,
generators.py, scan_ops.py).

Compile-time operands (a Reshape's shape, Slice's starts, Pad's pads) come from the graph's constants through
`Call.ints`; the ONNX rules (0 copies a dimension, -1 is inferred, negative axes count from the end) are applied to
the tensor at hand, so a module made for training also runs another batch size (a Reshape whose shape spells out
the traced batch size, as `x.flatten(1)` traces, takes the batch of its input).
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from .registry import Call, op


def _axes(axes, rank: int) -> list[int]:
    return [int(a) % rank for a in axes]


@op("Reshape")
def reshape(c: Call, x, shape=None):
    dims = c.attr("shape") if c.since < 5 else c.ints(1, shape)
    if not c.attr("allowzero", 0):
        dims = [x.shape[i] if d == 0 else d for i, d in enumerate(dims)]
    planned = c.graph.values[c.node.inputs[0]].shape
    if dims and planned and x.dim() and x.shape[0] != planned[0] and dims[0] == planned[0]:
        dims = [x.shape[0], *dims[1:]]  # a traced batch size written into the shape follows the batch at hand
    return x.reshape(dims)


@op("Flatten")
def flatten(c: Call, x):
    axis = c.attr("axis", 1)
    axis = axis + x.dim() if axis < 0 else axis
    lead = math.prod(x.shape[:axis])  # math, not numpy: torch.compile traces numpy calls as tensor ops
    return x.reshape(lead, -1) if x.numel() else x.reshape(lead, math.prod(x.shape[axis:]))


@op("Squeeze")
def squeeze(c: Call, x, axes=None):
    ax = c.attr("axes") if c.since < 13 else c.ints(1, axes)
    if ax is None:
        return x.reshape([d for d in x.shape if d != 1])
    drop = set(_axes(ax, x.dim()))
    return x.reshape([d for i, d in enumerate(x.shape) if i not in drop])


@op("Unsqueeze")
def unsqueeze(c: Call, x, axes=None):
    ax = c.attr("axes") if c.since < 13 else c.ints(1, axes)
    rank = x.dim() + len(ax)
    shape, it = [], iter(x.shape)
    new = set(_axes(ax, rank))
    for i in range(rank):
        shape.append(1 if i in new else next(it))
    return x.reshape(shape)


@op("Transpose")
def transpose(c: Call, x):
    perm = c.attr("perm") or list(reversed(range(x.dim())))
    return x.permute(*perm)


@op("Expand")
def expand(c: Call, x, shape):
    return x.expand(torch.broadcast_shapes(tuple(x.shape), tuple(c.ints(1, shape))))


@op("Concat")
def concat(c: Call, *xs):
    return torch.cat([x for x in xs if x is not None], dim=c.attr("axis"))


@op("Split")
def split(c: Call, x, sizes=None):
    axis = c.attr("axis", 0) % x.dim()
    parts = c.attr("split") if c.since < 13 else c.ints(1, sizes)
    n = len(c.node.outputs)
    if not parts:
        per = -(-x.shape[axis] // (c.attr("num_outputs") or n))
        parts = [min(per, x.shape[axis] - i * per) for i in range(n)]
    return tuple(torch.split(x, list(parts), dim=axis))


@op("Slice")
def slice_(c: Call, x, starts=None, ends=None, axes=None, steps=None):
    if c.since < 10:
        st, en, ax, sp = c.attr("starts"), c.attr("ends"), c.attr("axes"), None
    else:
        st, en, ax, sp = c.ints(1, starts), c.ints(2, ends), c.ints(3, axes), c.ints(4, steps)
    ax = list(range(len(st))) if ax is None else _axes(ax, x.dim())
    sp = sp or [1] * len(st)
    for a, s, e, k in zip(ax, st, en, sp):
        size = x.shape[a]
        idx = list(range(size))[slice(*_clamp(s, e, k, size))]
        x = x.index_select(a, torch.tensor(idx, dtype=torch.long, device=x.device))
    return x


def _clamp(s: int, e: int, k: int, size: int) -> tuple[int | None, int | None, int]:
    """ONNX Slice bounds as a Python slice (huge and negative values clamp as the spec says)."""
    s = s + size if s < 0 else s
    e = e + size if e < 0 else e
    if k > 0:
        return max(0, min(s, size)), max(0, min(e, size)), k
    s = max(-1, min(s, size - 1))
    e = max(-1, min(e, size - 1))
    return s, (None if e < 0 else e), k


@op("Tile")
def tile(c: Call, x, repeats):
    return x.repeat(*c.ints(1, repeats))


@op("DepthToSpace")
def depth_to_space(c: Call, x):
    b = c.attr("blocksize")
    n, ch, h, w = x.shape
    if c.attr("mode", "DCR") == "DCR":
        y = x.reshape(n, b, b, ch // (b * b), h, w).permute(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(n, ch // (b * b), b, b, h, w).permute(0, 1, 4, 2, 5, 3)
    return y.reshape(n, ch // (b * b), h * b, w * b)


@op("SpaceToDepth")
def space_to_depth(c: Call, x):
    b = c.attr("blocksize")
    n, ch, h, w = x.shape
    y = x.reshape(n, ch, h // b, b, w // b, b).permute(0, 3, 5, 1, 2, 4)
    return y.reshape(n, ch * b * b, h // b, w // b)


@op("Shape")
def shape_(c: Call, x):
    dims = list(x.shape)
    start, end = c.attr("start", 0), c.attr("end", None)
    return torch.tensor(dims[slice(start, end)], dtype=torch.int64, device=x.device)


@op("Size")
def size(c: Call, x):
    return torch.tensor(x.numel(), dtype=torch.int64, device=x.device)


@op("Gather")
def gather(c: Call, x, idx):
    axis = c.attr("axis", 0) % x.dim()
    i = idx.long()
    i = torch.where(i < 0, i + x.shape[axis], i)
    out = x.index_select(axis, i.reshape(-1))
    return out.reshape(*x.shape[:axis], *idx.shape, *x.shape[axis + 1 :])


@op("GatherElements")
def gather_elements(c: Call, x, idx):
    axis = c.attr("axis", 0) % x.dim()
    i = idx.long()
    return torch.gather(x, axis, torch.where(i < 0, i + x.shape[axis], i))


@op("ScatterElements")
def scatter_elements(c: Call, x, idx, updates):
    axis = c.attr("axis", 0) % x.dim()
    i = idx.long()
    i = torch.where(i < 0, i + x.shape[axis], i)
    red = c.attr("reduction", "none")
    if red == "none":
        return x.scatter(axis, i, updates)
    return x.scatter_reduce(axis, i, updates, {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}[red])


@op("Pad")
def pad(c: Call, x, pads=None, value=None, axes=None):
    if c.since < 11:
        p, v = c.attr("pads"), c.attr("value", 0.0)
    else:
        p = c.ints(1, pads)
        v = value.reshape(()).item() if value is not None and value.numel() else 0
    rank = x.dim()
    ax = list(range(rank)) if axes is None else _axes(c.ints(3, axes), rank)
    n = len(ax)
    begin, end = [0] * rank, [0] * rank
    for k, a in enumerate(ax):
        begin[a], end[a] = p[k], p[n + k]
    flat = []
    for a in reversed(range(rank)):
        flat += [begin[a], end[a]]
    mode = c.attr("mode", "constant")
    if mode == "constant":
        return F.pad(x, flat, value=v)
    first = next((a for a in range(rank) if begin[a] or end[a]), rank)
    lead = list(x.shape[:first])  # torch pads the last axes of a (N, C, *S) tensor in these modes
    y = x.reshape(1, -1, *x.shape[first:]) if first > 0 else x.reshape(1, 1, *x.shape)
    out = F.pad(
        y, flat[: 2 * (rank - first)], mode={"reflect": "reflect", "edge": "replicate", "wrap": "circular"}[mode]
    )
    return out.reshape(*lead, *out.shape[2:]) if first > 0 else out.reshape(out.shape[2:])


@op("Dropout")
def dropout(c: Call, x, ratio=None, training_mode=None):
    ratio_value = c.const(1)
    zero = ratio_value is not None and float(ratio_value.reshape(-1)[0]) == 0.0
    if c.since >= 12 and c.ints(2, training_mode) not in (None, [0]) and not zero:
        raise ValueError("Dropout in training mode (random masks) is not supported on torch")
    outs = [x, torch.ones_like(x, dtype=torch.bool) if c.since >= 10 else torch.ones_like(x)]
    return tuple(outs[: len(c.node.outputs)])


@op("ConstantOfShape")
def constant_of_shape(c: Call, shape):
    v = c.attr("value")
    fill = 0 if v is None else np.asarray(v).reshape(-1)[0].item()
    return torch.full(c.ints(0, shape), fill, dtype=c.dtype(0), device=shape.device)


@op("Range")
def range_(c: Call, start, limit, delta):
    return torch.arange(start.item(), limit.item(), delta.item(), dtype=c.dtype(0), device=start.device)


@op("CumSum")
def cumsum(c: Call, x, axis):
    a = c.ints(1, axis)[0] % x.dim()
    y = x.flip(a) if c.attr("reverse", 0) else x
    out = torch.cumsum(y, a)
    if c.attr("exclusive", 0):
        out = out - y
    return out.flip(a) if c.attr("reverse", 0) else out


@op("Trilu")
def trilu(c: Call, x, k=None):
    kk = c.ints(1, k)[0] if k is not None else 0
    return torch.triu(x, kk) if c.attr("upper", 1) else torch.tril(x, kk)


@op("TopK")
def topk(c: Call, x, k):
    axis = c.attr("axis", -1) % x.dim()
    kk = c.attr("k") if c.since < 10 else c.ints(1, k)[0]
    # a stable sort: equal values keep the lower index first, as ONNX asks (torch.topk does not promise it)
    v, i = torch.sort(x, dim=axis, descending=bool(c.attr("largest", 1)), stable=True)
    return v.narrow(axis, 0, kk), i.narrow(axis, 0, kk)


@op("CenterCropPad")
def center_crop_pad(c: Call, x, shape):
    target = c.ints(1, shape)
    axes = list(range(x.dim())) if c.attr("axes") is None else _axes(c.attr("axes"), x.dim())
    for a, t in zip(axes, target):
        d = x.shape[a]
        if t < d:  # crop the middle; pad evenly (the odd one at the end)
            x = x.narrow(a, (d - t) // 2, t)
        elif t > d:
            widths = [0, 0] * (x.dim() - 1 - a) + [(t - d) // 2, t - d - (t - d) // 2]
            x = F.pad(x, widths)
    return x
