"""GridSample lowering: 1 to 3 spatial dims, every mode (nearest, linear / bilinear, cubic / bicubic) and padding
mode (zeros, border, reflection) of opsets 16 to 22, float32 and float64 (the grid in the input's type).

AffineGrid (opset 20), the grid such models sample with: its size must be a constant (bound when it is a graph
input: it is the output's shape), so the normalised base coordinates (x, y[, z], 1) of every output point are
computed here as the reference does; the step multiplies them by each theta at run time, in double."""

from __future__ import annotations

import math

import numpy as np

from ....ir import Node
from ....ops.image import _base_coords
from . import Ctx, ctype, lower
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


@lower("AffineGrid")
def affine_grid(ctx: Ctx, node: Node) -> str:
    theta, y = node.inputs[0], node.outputs[0]
    dt = ctx.dtype(theta).name
    ctx.require(dt in SUFFIX, f"no C AffineGrid on {dt} (float32 and float64 only)")
    size = ctx.const(node.inputs[1])
    ctx.require(size is not None, "size must be a constant (bind it): it decides the output's shape")
    sp = [int(v) for v in np.asarray(size).reshape(-1)[2:]]
    r, n = len(sp), ctx.shape(theta)[0]
    ctx.require(ctx.shape(theta)[1:] == (r, r + 1), f"theta is {list(ctx.shape(theta))}, expected (N, {r}, {r + 1})")
    points = math.prod(sp)
    if n * points == 0:
        return "/* empty */"
    mesh = np.meshgrid(*[_base_coords(v, int(attr(node, "align_corners", 0))) for v in sp], indexing="ij")
    homo = np.stack([*mesh[::-1], np.ones(sp)], axis=-1).reshape(-1)  # (x, y[, z], 1) per point, as the reference
    ct = ctype(ctx.dtype(theta))
    return "\n".join([
        "{",
        f"  const {ct} *th = {ctx.tensor(theta)};",
        f"  const double *h = {ctx.pack(f'affine_grid:{node.name}', homo)};",
        f"  {ct} *yp = {ctx.tensor(y)};",
        f"  for (long b = 0; b < {n}; b++)",
        f"    for (long p = 0; p < {points}; p++)",
        f"      for (int j = 0; j < {r}; j++) {{",
        "        double acc = 0.0;",
        f"        for (int k = 0; k <= {r}; k++) acc += h[p * {r + 1} + k] * (double)th[(b * {r} + j) * {r + 1} + k];",
        f"        yp[(b * {points} + p) * {r} + j] = ({ct})acc;",
        "      }",
        "}",
    ])  # fmt: skip
