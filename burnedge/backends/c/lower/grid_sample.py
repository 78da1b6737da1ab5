"""GridSample lowering: 1 to 3 spatial dims, every mode (nearest, linear / bilinear, cubic / bicubic) and padding
mode (zeros, border, reflection) of opsets 16 to 22, float32 and float64 (the grid in the input's type)."""

from __future__ import annotations

import math

from ....ir import Node
from . import Ctx, lower
from .gather import _arr
from .reduce import attr

MODES = {"nearest": 0, "linear": 1, "bilinear": 1, "cubic": 2, "bicubic": 2}
PADDING = {"zeros": 0, "border": 1, "reflection": 2}
SUFFIX = {"float32": "f32", "float64": "f64"}


@lower("GridSample")
def grid_sample(ctx: Ctx, node: Node) -> str:
    x, grid, y = node.inputs[0], node.inputs[1], node.outputs[0]
    dt = ctx.dtype(x).name
    ctx.require(dt in SUFFIX, f"no C GridSample on {dt} (float32 and float64 only)")
    ctx.require(ctx.dtype(grid).name == dt, f"the grid has dtype {ctx.dtype(grid)}, expected {dt} (the input's)")
    shape, gshape = ctx.shape(x), ctx.shape(grid)
    r = len(shape) - 2
    ctx.require(1 <= r <= 3, f"the input has rank {len(shape)}, expected 3 to 5 (1 to 3 spatial dims)")
    ctx.require(gshape[-1] == r, f"the grid's last dimension is {gshape[-1]}, expected {r}")
    mode = attr(node, "mode", "linear")
    pad = attr(node, "padding_mode", "zeros")
    ctx.require(mode in MODES, f"mode is {mode!r}, expected one of {', '.join(MODES)}")
    ctx.require(pad in PADDING, f"padding_mode is {pad!r}, expected one of {', '.join(PADDING)}")
    if ctx.size(y) == 0:
        return "/* empty */"
    if ctx.size(x) == 0:
        return f"memset({ctx.tensor(y)}, 0, {ctx.size(y) * ctx.dtype(y).itemsize});"
    points = math.prod(gshape[1:-1])
    align = int(attr(node, "align_corners", 0))
    args = f"{shape[0]}, {shape[1]}, {r}, dims, {points}, {MODES[mode]}, {PADDING[pad]}, {align}, threads"
    call = f"be_grid_sample_{SUFFIX[dt]}({ctx.tensor(x)}, {ctx.tensor(grid)}, {ctx.tensor(y)}, {args})"
    return f"{{ static const long dims[] = {_arr(shape[2:])};\n  if ({call}) return 2; }}"
