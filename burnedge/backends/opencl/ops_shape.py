"""Shape ops as copies: views (no kernel when the plan gives the output its input's bytes), Transpose, Slice,
Concat, Gather, Tile. Each is one work item per output element reading the input element it maps to."""

from __future__ import annotations

import numpy as np

from ...ir import Node
from .emit import Ctx, cltype, kernel
from .ops_elementwise import index_exprs, merge


def _prod(xs) -> int:
    return int(np.prod(xs, dtype=np.int64)) if len(xs) else 1


def _contiguous(shape) -> list[int]:
    return [_prod(shape[d + 1 :]) for d in range(len(shape))]


def copy_mapped(ctx: Ctx, src: str, dst: str, dims: list[int], src_strides: list[int], base: int = 0) -> None:
    """dst[i] = src[base + sum(c_d * src_strides[d])] over the coordinates c of `dims` (dst's order)."""
    n = _prod(dims)
    if n == 0:
        return
    d2, st = merge(list(dims) or [1], [list(src_strides) or [0], _contiguous(dims) or [1]])
    split, offs = index_exprs(d2, st)
    ct = cltype(ctx.dtype(dst))
    body = [f"if (i >= {n}) return;", *split, f"{ctx.ptr(dst)}[{offs[1]}] = ({ct}){ctx.ptr(src)}[{base} + {offs[0]}];"]
    ctx.launch("\n  ".join(body), n, (ctx.local_1d,))


VIEWS = ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout")


@kernel(*VIEWS)
def view(ctx: Ctx, node: Node) -> None:
    src, dst = node.inputs[0], node.outputs[0]
    ctx.require(not (len(node.outputs) > 1 and node.outputs[1]), "Dropout's mask output")
    v = ctx.graph.values[src]
    if not v.is_const and ctx.plan.offsets.get(src) == ctx.plan.offsets.get(dst):
        return  # the plan placed the output on the input's bytes
    n = ctx.size(dst)
    copy_mapped(ctx, src, dst, [n], [1])


@kernel("Transpose")
def transpose(ctx: Ctx, node: Node) -> None:
    shape = ctx.shape(node.inputs[0])
    perm = node.attrs.get("perm") or list(range(len(shape)))[::-1]
    st = _contiguous(shape)
    copy_mapped(ctx, node.inputs[0], node.outputs[0], [shape[p] for p in perm], [st[p] for p in perm])


def _ints(ctx: Ctx, node: Node, i: int) -> list[int] | None:
    if i >= len(node.inputs) or not node.inputs[i]:
        return None
    data = ctx.const(node.inputs[i])
    ctx.require(data is not None, f"input {i} ({node.inputs[i]!r}) computed at run time")
    return [int(v) for v in np.asarray(data).reshape(-1)]


@kernel("Slice")
def slice_(ctx: Ctx, node: Node) -> None:
    shape = ctx.shape(node.inputs[0])
    out = ctx.shape(node.outputs[0])
    if node.op.since < 10:
        starts, ends = node.attrs["starts"], node.attrs["ends"]
        axes, steps = node.attrs.get("axes"), None
    else:
        starts, ends, axes, steps = (_ints(ctx, node, i) for i in (1, 2, 3, 4))
    axes = [a % len(shape) for a in (axes if axes is not None else range(len(starts)))]
    steps = steps or [1] * len(axes)
    begin, step = [0] * len(shape), [1] * len(shape)
    for a, s0, e0, sp in zip(axes, starts, ends, steps):
        dim = shape[a]
        s0 = s0 + dim if s0 < 0 else s0
        s0 = min(max(s0, 0), dim) if sp > 0 else min(max(s0, -1), dim - 1)
        begin[a], step[a] = s0, sp
        del e0
    st = _contiguous(shape)
    base = sum(b * s for b, s in zip(begin, st))
    copy_mapped(ctx, node.inputs[0], node.outputs[0], list(out), [s * p for s, p in zip(st, step)], base)


@kernel("Concat")
def concat(ctx: Ctx, node: Node) -> None:
    out = ctx.shape(node.outputs[0])
    axis = int(node.attrs["axis"]) % len(out)
    at = 0
    ost = _contiguous(out)
    for name in node.inputs:
        shape = ctx.shape(name)
        if _prod(shape) == 0:
            continue
        # write through a strided destination: dst coordinates are the input's, shifted along the axis
        n = _prod(shape)
        d2, st = merge(list(shape), [_contiguous(shape), ost])
        split, offs = index_exprs(d2, st)
        ct = cltype(ctx.dtype(node.outputs[0]))
        body = [
            f"if (i >= {n}) return;",
            *split,
            f"{ctx.ptr(node.outputs[0])}[{at * ost[axis]} + {offs[1]}] = ({ct}){ctx.ptr(name)}[{offs[0]}];",
        ]
        ctx.launch("\n  ".join(body), n, (ctx.local_1d,))
        at += shape[axis]


@kernel("Gather")
def gather(ctx: Ctx, node: Node) -> None:
    data, idx, y = node.inputs[0], node.inputs[1], node.outputs[0]
    shape = ctx.shape(data)
    axis = int(node.attrs.get("axis", 0)) % len(shape)
    ctx.require(ctx.dtype(idx).kind in "iu", f"indices of {ctx.dtype(idx)}")
    outer, dim, inner = _prod(shape[:axis]), shape[axis], _prod(shape[axis + 1 :])
    n_idx = ctx.size(idx)
    n = outer * n_idx * inner
    ct = cltype(ctx.dtype(y))
    body = [
        f"if (i >= {n}) return;",
        f"const long o = i / {n_idx * inner}, q = (i / {inner}) % {n_idx}, r = i % {inner};",
        f"long k = (long){ctx.ptr(idx)}[q]; if (k < 0) k += {dim};",
        f"{ctx.ptr(y)}[i] = (k >= 0 && k < {dim}) ? ({ct}){ctx.ptr(data)}[(o * {dim} + k) * {inner} + r] : ({ct})0;",
    ]
    ctx.launch("\n  ".join(body), n, (ctx.local_1d,))


@kernel("Tile")
def tile(ctx: Ctx, node: Node) -> None:
    shape, out = ctx.shape(node.inputs[0]), ctx.shape(node.outputs[0])
    n = _prod(out)
    split, offs = index_exprs(list(out), [_contiguous(out)])
    st = _contiguous(shape)
    src = (
        " + ".join(f"(c{d} % {shape[d]}) * {st[d]}" for d in range(len(shape)))
        if len(shape) > 1
        else f"(i % {shape[0]})"
    )
    ct = cltype(ctx.dtype(node.outputs[0]))
    body = [
        f"if (i >= {n}) return;",
        *split,
        f"{ctx.ptr(node.outputs[0])}[i] = ({ct}){ctx.ptr(node.inputs[0])}[{src}];",
    ]
    ctx.launch("\n  ".join(body), n, (ctx.local_1d,))
