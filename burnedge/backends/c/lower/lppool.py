"""LpPool lowering: 1-D, 2-D and 3-D windows over the reference's own geometry (pads, auto_pad, ceil_mode,
dilations), so output sizes agree by construction; the kernel sums |x|^p in double."""

from __future__ import annotations

from ....ir import Node
from . import Ctx, lower
from .gather import _arr
from .layout import pool_geometry
from .reduce import attr


@lower("LpPool")
def lp_pool(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    ctx.require(ctx.dtype(x).name == "float32", f"no C LpPool on {ctx.dtype(x)} (float32 only)")
    shape = ctx.shape(x)
    ctx.require(3 <= len(shape) <= 5, f"the input has rank {len(shape)}, expected 3 to 5 (1-D to 3-D windows)")
    p = float(attr(node, "p", 2))
    ctx.require(p > 0, f"p is {p}, expected > 0")
    if ctx.size(y) == 0:
        return "/* empty */"
    kern, strides, dil, geo = pool_geometry(tuple(shape), node)
    dims = [[i, o, k, s, d, b] for i, o, k, s, d, b in zip(shape[2:], geo.out, kern, strides, dil, geo.begin)]
    dims = [[1, 1, 1, 1, 1, 0]] * (3 - len(dims)) + dims
    table = _arr(v for row in dims for v in row)
    nc = shape[0] * shape[1]
    call = f"be_lppool_f32({ctx.tensor(x)}, {ctx.tensor(y)}, {nc}, geo, {p!r}, threads);"
    return f"{{ static const long geo[] = {table};\n  {call} }}"
