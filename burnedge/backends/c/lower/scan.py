"""Scan lowerings: CumSum and CumProd (constant or run-time axis) and Trilu (constant or run-time k).

A constant axis is split into [outer, n, inner] at compile time; a run-time one is read by the step and split by
`be_axis_split` over the static shape, the step failing (nonzero status) when it is out of range, as the
reference raises. Trilu is dtype-blind: it moves and zeroes whole elements (zero bytes are 0 in every C type).
"""

from __future__ import annotations

import numpy as np

from ....ir import Node
from . import Ctx, lower
from .reduce import SUFFIX, attr, norm_axis, split

SCAN_TYPES = ("float32", "float64", "int32", "int64")


def _scalar(ctx: Ctx, name: str) -> str:
    """A C expression (int64_t) of the first element of the integer tensor `name`: a literal when constant."""
    value = ctx.const(name)
    if value is not None:
        return f"(int64_t){int(np.asarray(value).reshape(-1)[0])}"
    ctx.require(ctx.dtype(name).kind == "i", f"input {name!r} has dtype {ctx.dtype(name)}, expected an integer")
    ctx.require(ctx.size(name) == 1, f"input {name!r} has {ctx.size(name)} elements, expected 1")
    return f"(int64_t){ctx.tensor(name)}[0]"


@lower("CumSum", "CumProd")
def cumulative(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    dt = ctx.dtype(x).name
    ctx.require(dt in SCAN_TYPES, f"no C {node.op_type} on {dt} (C kernels: {', '.join(SCAN_TYPES)})")
    if ctx.size(y) == 0:
        return "/* empty */"
    shape = ctx.shape(x)
    excl, rev = int(attr(node, "exclusive", 0)), int(attr(node, "reverse", 0))
    fn = f"be_{'cumsum' if node.op_type == 'CumSum' else 'cumprod'}_{SUFFIX[dt]}"
    axis = ctx.const(node.inputs[1])
    if axis is not None:
        outer, n, inner = split(shape, norm_axis(ctx, int(np.asarray(axis).reshape(-1)[0]), len(shape)))
        return f"{fn}({ctx.tensor(x)}, {ctx.tensor(y)}, {outer}, {n}, {inner}, {excl}, {rev}, threads);"
    dims = ", ".join(str(d) for d in shape) or "1"
    return "\n".join(
        [
            "{",
            f"  static const long dims[] = {{{dims}}};",
            "  long outer, n, inner;",
            f"  if (!be_axis_split(dims, {len(shape)}, {_scalar(ctx, node.inputs[1])}, &outer, &n, &inner)) return 2;",
            f"  {fn}({ctx.tensor(x)}, {ctx.tensor(y)}, outer, n, inner, {excl}, {rev}, threads);",
            "}",
        ]
    )


@lower("Trilu")
def trilu(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    shape = ctx.shape(x)
    ctx.require(len(shape) >= 2, f"the input has rank {len(shape)}, expected at least 2")
    if ctx.size(y) == 0:
        return "/* empty */"
    k = _scalar(ctx, node.inputs[1]) if len(node.inputs) > 1 and node.inputs[1] else "0"
    rows, cols = shape[-2], shape[-1]
    batch = ctx.size(x) // (rows * cols)
    esize = ctx.dtype(x).itemsize
    upper = int(attr(node, "upper", 1))
    src, dst = ctx.tensor(x, "uint8_t"), ctx.tensor(y, "uint8_t")
    return f"be_trilu({src}, {dst}, {batch}, {rows}, {cols}, {k}, {upper}, {esize});"
