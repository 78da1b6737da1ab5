"""Reduction lowerings: Reduce* (constant axes), ArgMax/ArgMin, TopK (constant K); CumSum lives in scan.py.

Every kernel sees its input as [outer, n, inner]. Reduced axes are first merged into blocks of adjacent axes
(size-1 axes dropped); one block is one kernel call; several blocks are reduced innermost first through scratch
(sums of sums, max of max, LogSumExp of LogSumExp), the last call writing the output and applying the final step
(sqrt, log, division by the count). keepdims does not change the bytes of the output.

Also home of helpers shared with the pool and norm lowerings (`attr`, `flit`, `kernel`, `split`).
"""

from __future__ import annotations

import math
import os

import numpy as np

from ....ir import Graph, Node
from ....ops import REQUIRED
from . import Ctx, lower

# set BURNEDGE_C_PORTABLE=1 (or this flag, in tests) to call the SIMD-free twin of every kernel that has one
PORTABLE = os.environ.get("BURNEDGE_C_PORTABLE", "") not in ("", "0")


def kernel(name: str) -> str:
    """The C function to call for a kernel with a SIMD path: its portable twin when PORTABLE is set."""
    return f"{name}_portable" if PORTABLE else name


def attr(node: Node, name: str, default=None):
    """An attribute of `node`, else the op's default, else `default`."""
    if name in node.attrs:
        return node.attrs[name]
    value = node.op.attrs.get(name, default)
    return default if value is REQUIRED else value


def flit(x: float) -> str:
    """A C float literal with exactly the float32 value of `x`."""
    v = np.float32(x)
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return f"{float(v)!r}f"


def split(shape: tuple[int, ...], axis: int) -> tuple[int, int, int]:
    """(outer, n, inner) of `shape` around `axis`."""
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])


def norm_axis(ctx: Ctx, axis: int, rank: int) -> int:
    ctx.require(-rank <= axis < max(rank, 1), f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


# -- Reduce* ------------------------------------------------------------------------------------------------------
# op -> (pre, combine, post) of kernels/reduce.h
KINDS = {
    "ReduceSum": ("BE_PRE_NONE", "BE_RED_SUM", "BE_POST_NONE"),
    "ReduceMean": ("BE_PRE_NONE", "BE_RED_SUM", "BE_POST_DIV"),
    "ReduceMax": ("BE_PRE_NONE", "BE_RED_MAX", "BE_POST_NONE"),
    "ReduceMin": ("BE_PRE_NONE", "BE_RED_MIN", "BE_POST_NONE"),
    "ReduceProd": ("BE_PRE_NONE", "BE_RED_PROD", "BE_POST_NONE"),
    "ReduceL1": ("BE_PRE_ABS", "BE_RED_SUM", "BE_POST_NONE"),
    "ReduceL2": ("BE_PRE_SQUARE", "BE_RED_SUM", "BE_POST_SQRT"),
    "ReduceSumSquare": ("BE_PRE_SQUARE", "BE_RED_SUM", "BE_POST_NONE"),
    "ReduceLogSum": ("BE_PRE_NONE", "BE_RED_SUM", "BE_POST_LOG"),
    "ReduceLogSumExp": ("BE_PRE_NONE", "BE_RED_LSE", "BE_POST_NONE"),
}
INT_KINDS = ("ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceSumSquare")
# 8-bit and bool inputs: the extremes only (an int8 ReduceMax is how a quantized max runs: int8_passthrough)
BYTE_KINDS = ("ReduceMax", "ReduceMin")
BYTE_SUFFIX = {"int8": "i8", "uint8": "u8", "bool": "bool"}


def _axes(graph: Graph, node: Node) -> tuple[int, ...] | None:
    """The reduced axes (sorted, non-negative); None when they are not known at compile time."""
    rank = len(graph.values[node.inputs[0]].shape)
    if "axes" in node.op.attrs:
        axes = attr(node, "axes")
    elif len(node.inputs) > 1 and node.inputs[1]:
        axes = graph.values[node.inputs[1]].data
        if axes is None:
            return None
    else:
        axes = None
    axes = [] if axes is None else [int(a) % max(rank, 1) for a in np.asarray(axes).reshape(-1)]
    if not axes:
        return () if attr(node, "noop_with_empty_axes", 0) else tuple(range(rank))
    return tuple(sorted(set(axes)))


def _stages(shape: tuple[int, ...], axes: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """The (outer, n, inner) of each kernel call, innermost reduced block first; at least one call."""
    if 0 in shape:  # an empty reduction: every output is the identity (outer = the output size)
        out = math.prod(d for i, d in enumerate(shape) if i not in axes)
        return [(out, 0 if any(shape[a] == 0 for a in axes) else 1, 1)]
    blocks: list[list] = []  # [size, reduced]
    for i, d in enumerate(shape):
        if d == 1:
            continue
        red = i in axes
        if blocks and blocks[-1][1] == red:
            blocks[-1][0] *= d
        else:
            blocks.append([d, red])
    stages = []
    while any(red for _, red in blocks):
        j = max(i for i, (_, red) in enumerate(blocks) if red)
        outer = math.prod(d for d, _ in blocks[:j])
        inner = math.prod(d for d, _ in blocks[j + 1 :])
        stages.append((outer, blocks[j][0], inner))
        del blocks[j]
        if 0 < j < len(blocks) and not blocks[j - 1][1] and not blocks[j][1]:
            blocks[j - 1][0] *= blocks[j][0]
            del blocks[j]
    return stages or [(math.prod(shape), 1, 1)]


def _reduce_scratch(graph: Graph, node: Node) -> int:
    axes = _axes(graph, node)
    x = graph.values[node.inputs[0]]
    if axes is None:
        return 0
    stages = _stages(x.shape, axes)
    return sum(o * i for o, _, i in stages[:-1]) * x.dtype.itemsize


@lower(*KINDS, scratch=_reduce_scratch)
def reduce(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    axes = _axes(ctx.graph, node)
    ctx.require(axes is not None, "the axes input is not a constant")
    dt = ctx.dtype(x).name
    is_int = dt in ("int32", "int64") or dt in BYTE_SUFFIX
    ok = dt == "float32" or (dt in ("int32", "int64") and node.op_type in INT_KINDS)
    ok = ok or dt == "float64"
    ctx.require(ok or (dt in BYTE_SUFFIX and node.op_type in BYTE_KINDS), f"no C {node.op_type} on {dt}")
    if ctx.size(y) == 0:
        return "/* empty */"
    pre, comb, post = KINDS[node.op_type]
    stages = _stages(ctx.shape(x), axes)
    count = math.prod(ctx.shape(x)[a] for a in axes)
    ct = {"float32": "float", "float64": "double", "bool": "uint8_t"}.get(dt, f"{dt}_t")
    lines, src, offset = [], ctx.tensor(x), 0
    for k, (outer, n, inner) in enumerate(stages):
        last = k == len(stages) - 1
        if last:
            dst = ctx.tensor(y)
        else:
            dst = f"({ctx.scratch(ct)} + {offset})"
            offset += outer * inner
        p = pre if k == 0 else "BE_PRE_NONE"
        if dt == "float64" and comb == "BE_RED_LSE":
            lines.append(f"be_reduce_lse_f64({src}, {dst}, {outer}, {n}, {inner}, threads);")
        elif dt == "float64":
            q = post if last else "BE_POST_NONE"
            args = f"{outer}, {n}, {inner}, {p}, {comb}, {q}, {float(count)!r}"
            lines.append(f"be_reduce_f64({src}, {dst}, {args}, threads);")
        elif is_int:
            suffix = BYTE_SUFFIX.get(dt, f"i{dt[3:]}")
            lines.append(f"be_reduce_{suffix}({src}, {dst}, {outer}, {n}, {inner}, {p}, {comb}, threads);")
        else:
            q = post if last else "BE_POST_NONE"
            args = f"{outer}, {n}, {inner}, {p}, {comb}, {q}, {flit(count)}"
            lines.append(f"{kernel('be_reduce_f32')}({src}, {dst}, {args}, threads);")
        src = dst
    return "\n".join(lines)


# -- ArgMax / ArgMin ----------------------------------------------------------------------------------------------
SUFFIX = {"float32": "f32", "float64": "f64", "int32": "i32", "int64": "i64", "int8": "i8", "uint8": "u8"}


@lower("ArgMax", "ArgMin")
def arg_extreme(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    dt = ctx.dtype(x).name
    ctx.require(dt in ("float32", "int32", "int64", "int8", "uint8"), f"no C {node.op_type} on {dt}")
    shape = ctx.shape(x)
    outer, n, inner = split(shape, norm_axis(ctx, attr(node, "axis", 0), len(shape)))
    if ctx.size(y) == 0:
        return "/* empty */"
    ctx.require(n > 0, f"{node.op_type} of an empty axis")
    is_min = int(node.op_type == "ArgMin")
    last = int(attr(node, "select_last_index", 0))
    return (
        f"be_argmax_{SUFFIX[dt]}({ctx.tensor(x)}, {ctx.tensor(y)}, {outer}, {n}, {inner}, {is_min}, {last}, threads);"
    )


# -- TopK ---------------------------------------------------------------------------------------------------------
TOPK_SUFFIX = {**SUFFIX, "int16": "i16", "uint16": "u16", "uint32": "u32", "uint64": "u64"}


@lower("TopK")
def top_k(ctx: Ctx, node: Node) -> str:
    x = node.inputs[0]
    dt = ctx.dtype(x).name
    ctx.require(dt in TOPK_SUFFIX, f"no C TopK on {dt} (one of {', '.join(TOPK_SUFFIX)})")
    if "k" in node.op.attrs:
        k = int(attr(node, "k"))
    else:
        kv = ctx.const(node.inputs[1])
        ctx.require(kv is not None, "K is not a constant")
        k = int(np.asarray(kv).reshape(-1)[0])
    shape = ctx.shape(x)
    outer, n, inner = split(shape, norm_axis(ctx, attr(node, "axis", -1), len(shape)))
    ctx.require(0 <= k <= n, f"k={k} is out of range for an axis of length {n}")
    values, indices = node.outputs[0], node.outputs[1] if len(node.outputs) > 1 else ""
    ctx.require(bool(values) and bool(indices), "TopK needs both outputs")
    if k == 0 or outer * inner == 0:
        return "/* empty */"
    largest = int(attr(node, "largest", 1))
    return (
        f"be_topk_{TOPK_SUFFIX[dt]}({ctx.tensor(x)}, {ctx.tensor(values)}, {ctx.tensor(indices)}, {outer}, {n}, "
        f"{inner}, {k}, {largest}, threads);"
    )
