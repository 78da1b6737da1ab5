"""RoiAlign (opsets 10, 16, 22) on be_roi_align_* (kernels/sampling.h): float32 and float64, avg and max, the
regions and their batch indices at run time (an index out of range fails the run); opset 10 does not shift the
coordinates by half a pixel, later opsets do unless coordinate_transformation_mode is output_half_pixel."""

from __future__ import annotations

import numpy as np

from ....ir import Node
from . import Ctx, lower
from .reduce import attr

SUFFIX = {"float32": "f32", "float64": "f64"}
MODES = {"avg": 0, "max": 1}


@lower("RoiAlign")
def roi_align(ctx: Ctx, node: Node) -> str:
    x, rois, batch, y = *node.inputs[:3], node.outputs[0]
    dt = ctx.dtype(x).name
    ctx.require(dt in SUFFIX, f"no C RoiAlign on {dt} (float32 and float64 only)")
    ctx.require(ctx.dtype(rois).name == dt, f"the rois are {ctx.dtype(rois)}, expected {dt} (the input's)")
    ctx.require(ctx.dtype(batch) == np.int64, f"batch_indices are {ctx.dtype(batch)}, expected int64")
    shape = ctx.shape(x)
    ctx.require(len(shape) == 4, f"the input has rank {len(shape)}, expected 4 (N, C, H, W)")
    mode = attr(node, "mode", "avg")
    ctx.require(mode in MODES, f"mode is {mode!r}, expected avg or max")
    ctm = attr(node, "coordinate_transformation_mode", "half_pixel") if node.op.since >= 16 else "output_half_pixel"
    ctx.require(ctm in ("half_pixel", "output_half_pixel"), f"coordinate_transformation_mode {ctm!r} is unknown")
    nr = ctx.shape(rois)[0]
    oh, ow = int(attr(node, "output_height", 1)), int(attr(node, "output_width", 1))
    if ctx.size(y) == 0:
        return "/* empty */"
    ctx.require(ctx.size(x) > 0, "an empty input with regions to sample")
    n, c, h, w = shape
    ratio, scale = int(attr(node, "sampling_ratio", 0)), float(attr(node, "spatial_scale", 1.0))
    half = int(ctm == "half_pixel")
    args = f"{n}, {c}, {h}, {w}, {nr}, {oh}, {ow}, {ratio}, {scale!r}, {half}, {MODES[mode]}, threads"
    call = f"be_roi_align_{SUFFIX[dt]}({ctx.tensor(x)}, {ctx.tensor(rois)}, {ctx.tensor(batch)}, {ctx.tensor(y)}"
    return f"if ({call}, {args})) return 2;"
