"""Normalisation lowerings: Softmax, LogSoftmax, LayerNormalization, BatchNormalization (inference with constant
parameters; batch_norm.py does the rest), InstanceNormalization, GroupNormalization, LpNormalization and LRN.

Softmax and LogSoftmax before opset 13 see the input as 2D at `axis` (rows of prod(shape[axis:])); from 13 they
normalise one axis. BatchNormalization folds its four constant vectors into k = scale / sqrt(var + eps) and
b - mean * k, computed in float32 exactly as the reference, so the kernel is one multiply-add per element.
LRN sums the squares of the `size` channels around each one ((size - 1) // 2 before, size // 2 after, the missing
ones zero, as the reference pads), in double, then x / (bias + alpha / size * sum) ** beta.
"""

from __future__ import annotations

import math

import numpy as np

from ....ir import Node
from . import Ctx, lower
from .batch_norm import batch_norm_general, needs_general
from .reduce import attr, flit, kernel, norm_axis, split


def softmax_axes(ctx: Ctx, node: Node, shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(outer, n, inner) of a Softmax-like op (Softmax, LogSoftmax, Hardmax): before opset 13 everything from `axis`
    on (default 1) is one row; from 13 the one axis (default -1)."""
    if not shape:
        return 1, 1, 1
    if node.op.since < 13:
        a = norm_axis(ctx, attr(node, "axis", 1), len(shape))
        return math.prod(shape[:a]), math.prod(shape[a:]), 1
    return split(shape, norm_axis(ctx, attr(node, "axis", -1), len(shape)))


def norm_rows(ctx: Ctx, node: Node) -> tuple[tuple[int, ...], int, int, int]:
    """(shape, axis, rows, row length) of a normalization over the axes from `axis` (default -1) on."""
    shape = ctx.shape(node.inputs[0])
    a = norm_axis(ctx, attr(node, "axis", -1), len(shape))
    return shape, a, math.prod(shape[:a]), math.prod(shape[a:])


@lower("Softmax", "LogSoftmax")
def softmax(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    ctx.require(ctx.dtype(x) in (np.float32, np.float64), f"no C {node.op_type} on {ctx.dtype(x)}")
    if ctx.size(x) == 0:
        return "/* empty */"
    outer, n, inner = softmax_axes(ctx, node, ctx.shape(x))
    log_ = int(node.op_type == "LogSoftmax")
    if ctx.dtype(x) == np.float64:
        return _softmax_f64(ctx.tensor(x), ctx.tensor(y), outer, n, inner, log_)
    return f"{kernel('be_softmax_f32')}({ctx.tensor(x)}, {ctx.tensor(y)}, {outer}, {n}, {inner}, {log_}, threads);"


def _softmax_f64(x: str, y: str, outer: int, n: int, inner: int, log_: int) -> str:
    """float64 (Log)Softmax in double, one strided row at a time: exp(x - max) / sum, or x - max - log(sum)."""
    out = "v - mx - log(s)" if log_ else "exp(v - mx) / s"
    return "\n".join([
        "{",
        f"  const double *xp = {x};",
        f"  double *yp = {y};",
        f"  for (long o = 0; o < {outer}; o++)",
        f"    for (long i = 0; i < {inner}; i++) {{",
        f"      const double *r = xp + o * {n * inner} + i;",
        f"      double *w = yp + o * {n * inner} + i, mx = -INFINITY, s = 0.0;",
        f"      for (long j = 0; j < {n}; j++) if (r[j * {inner}] > mx) mx = r[j * {inner}];",
        f"      for (long j = 0; j < {n}; j++) s += exp(r[j * {inner}] - mx);",
        f"      for (long j = 0; j < {n}; j++) {{ const double v = r[j * {inner}]; w[j * {inner}] = {out}; }}",
        "    }",
        "}",
    ])  # fmt: skip


def _vector(ctx: Ctx, name: str, shape: tuple[int, ...], what: str) -> str:
    """A pointer to `name` holding exactly prod(shape) values in `shape`'s order (broadcast constants packed)."""
    v = ctx.graph.values[name]
    ctx.require(v.dtype == np.float32, f"{what} is {v.dtype}, not float32")
    dims = list(v.shape)
    while len(dims) > len(shape) and dims[0] == 1:
        dims.pop(0)
    if tuple(dims) == tuple(shape) or (math.prod(dims) == math.prod(shape) and len(shape) <= 1):
        return ctx.tensor(name)
    ctx.require(v.is_const, f"{what} of shape {list(v.shape)} is not a constant and does not match {list(shape)}")
    full = np.broadcast_to(v.data.reshape(dims), shape).astype(np.float32)
    return ctx.pack(f"{name}:broadcast{list(shape)}", full)


def _optional_out(ctx: Ctx, node: Node, i: int) -> str:
    name = node.outputs[i] if len(node.outputs) > i else ""
    return ctx.tensor(name) if name and name in ctx.plan.offsets else "NULL"


@lower("LayerNormalization")
def layer_normalization(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    ctx.require(ctx.dtype(x) == np.float32, f"no C LayerNormalization on {ctx.dtype(x)}")
    ctx.require(attr(node, "stash_type", 1) == 1, "only stash_type float32")
    shape, a, rows, d = norm_rows(ctx, node)
    if rows * d == 0:
        return "/* empty */"
    scale = _vector(ctx, node.inputs[1], shape[a:], "scale")
    bias = _vector(ctx, node.inputs[2], shape[a:], "bias") if len(node.inputs) > 2 and node.inputs[2] else "NULL"
    mean, inv = _optional_out(ctx, node, 1), _optional_out(ctx, node, 2)
    eps = flit(attr(node, "epsilon", 1e-5))
    return (
        f"{kernel('be_layernorm_f32')}({ctx.tensor(x)}, {ctx.tensor(y)}, {scale}, {bias}, {mean}, {inv}, "
        f"{rows}, {d}, {eps}, threads);"
    )


@lower("BatchNormalization")
def batch_normalization(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    if needs_general(ctx, node):
        return batch_norm_general(ctx, node)
    ctx.require(ctx.dtype(x) == np.float32, f"no C BatchNormalization on {ctx.dtype(x)}")
    params = [ctx.const(n) for n in node.inputs[1:5]]
    shape = ctx.shape(x)
    ctx.require(len(shape) >= 2, "an input of rank < 2")
    if attr(node, "spatial", 1):
        n, c, size = shape[0], shape[1], math.prod(shape[2:])
    else:  # one value per activation
        n, c, size = shape[0], math.prod(shape[1:]), 1
    scale, b, mean, var = (np.asarray(p).astype(np.float32).reshape(-1) for p in params)
    ctx.require(all(p.size == c for p in (scale, b, mean, var)), "parameter sizes do not match the channels")
    k = scale / np.sqrt(var + np.float32(attr(node, "epsilon", 1e-5)))
    shift = b - mean * k
    if ctx.size(x) == 0:
        return "/* empty */"
    kp = ctx.pack(f"{node.name}:bn_k", k.astype(np.float32))
    bp = ctx.pack(f"{node.name}:bn_b", shift.astype(np.float32))
    return f"be_channel_affine_f32({ctx.tensor(x)}, {ctx.tensor(y)}, {kp}, {bp}, {n}, {c}, {size}, threads);"


def _group_norm(ctx: Ctx, node: Node, groups: int, per_group: bool) -> str:
    x, y = node.inputs[0], node.outputs[0]
    ctx.require(ctx.dtype(x) == np.float32, f"no C {node.op_type} on {ctx.dtype(x)}")
    shape = ctx.shape(x)
    ctx.require(len(shape) >= 2, "an input of rank < 2")
    n, c, size = shape[0], shape[1], math.prod(shape[2:])
    ctx.require(groups > 0 and c % groups == 0, f"{c} channels do not split into {groups} groups")
    if ctx.size(x) == 0:
        return "/* empty */"
    vecs = []
    for name, what in ((node.inputs[1], "scale"), (node.inputs[2], "bias")):
        v = ctx.graph.values[name]
        if per_group and v.shape and math.prod(v.shape) == groups and groups != c:
            ctx.require(v.is_const, f"a per-group {what} that is not a constant")
            vecs.append(
                ctx.pack(f"{name}:per_channel{c}", np.repeat(v.data.reshape(-1), c // groups).astype(np.float32))
            )
        else:
            vecs.append(_vector(ctx, name, (c,), what))
    eps = flit(attr(node, "epsilon", 1e-5))
    return (
        f"{kernel('be_groupnorm_f32')}({ctx.tensor(x)}, {ctx.tensor(y)}, {vecs[0]}, {vecs[1]}, {n}, {groups}, "
        f"{c // groups}, {size}, {eps}, threads);"
    )


@lower("InstanceNormalization")
def instance_normalization(ctx: Ctx, node: Node) -> str:
    return _group_norm(ctx, node, ctx.shape(node.inputs[0])[1], False)


@lower("GroupNormalization")
def group_normalization(ctx: Ctx, node: Node) -> str:
    ctx.require(attr(node, "stash_type", 1) == 1, "only stash_type float32")
    return _group_norm(ctx, node, int(attr(node, "num_groups")), node.op.since < 21)


@lower("LpNormalization")
def lp_normalization(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    ctx.require(ctx.dtype(x) == np.float32, f"no C LpNormalization on {ctx.dtype(x)}")
    p = int(attr(node, "p", 2))
    ctx.require(p in (1, 2), f"p must be 1 or 2, not {p}")
    shape = ctx.shape(x)
    outer, n, inner = split(shape, norm_axis(ctx, attr(node, "axis", -1), len(shape)))
    if ctx.size(x) == 0:
        return "/* empty */"
    return f"be_lpnorm_f32({ctx.tensor(x)}, {ctx.tensor(y)}, {outer}, {n}, {inner}, {p}, threads);"


@lower("LRN")
def lrn(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    ctx.require(ctx.dtype(x) == np.float32, f"no C LRN on {ctx.dtype(x)} (float32 only)")
    shape = ctx.shape(x)
    ctx.require(len(shape) >= 2, f"the input has rank {len(shape)}, expected at least 2")
    size = int(attr(node, "size"))
    ctx.require(size >= 1, f"size is {size}, expected at least 1")
    alpha, beta, bias = (float(attr(node, k, d)) for k, d in (("alpha", 1e-4), ("beta", 0.75), ("bias", 1.0)))
    n, c, inner = shape[0], shape[1], math.prod(shape[2:])
    if ctx.size(x) == 0:
        return "/* empty */"
    lo, hi = (size - 1) // 2, size // 2
    return "\n".join([
        "{",
        f"  const float *xp = {ctx.tensor(x)};",
        f"  float *yp = {ctx.tensor(y)};",
        f"  for (long b = 0; b < {n}; b++)",
        f"    for (long ch = 0; ch < {c}; ch++)",
        f"      for (long i = 0; i < {inner}; i++) {{",
        "        double sq = 0.0;",
        f"        for (long k = ch - {lo}; k <= ch + {hi}; k++)",
        f"          if (k >= 0 && k < {c}) {{ const double v = xp[(b * {c} + k) * {inner} + i]; sq += v * v; }}",
        f"        const long at = (b * {c} + ch) * {inner} + i;",
        f"        yp[at] = (float)(xp[at] / pow({bias!r} + {alpha / size!r} * sq, {beta!r}));",
        "      }",
        "}",
    ])  # fmt: skip
