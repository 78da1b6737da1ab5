"""int8 reductions along axes: QSoftmax (exp by table, integer normalisation), QAvgPool and QGlobalAvgPool (rounded
integer averages; a channels-last input read in place)."""

from __future__ import annotations

import math

import numpy as np

from ....ir import Node
from . import Ctx, lower
from .layout import nhwc_int8_tensors
from .pool import pool_window
from .quantized import require_i8
from .reduce import attr

__all__ = ["qavg_pool", "qglobal_avg_pool", "qsoftmax"]


@lower("QSoftmax", domain="burnedge")
def qsoftmax(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    require_i8(ctx, [x, y])
    shape = ctx.shape(x)
    ctx.require(len(shape) >= 1, "QSoftmax needs an input of rank >= 1")
    axis = int(attr(node, "axis", -1)) % len(shape)
    table = np.asarray(node.attrs["table"], np.int64)
    ctx.require(table.shape == (256,), "QSoftmax needs a table of 256 values")
    if ctx.size(x) == 0:
        return "/* empty */"
    t = ctx.pack(f"q:softmax:{y}", table.astype(np.int32))
    outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1 :])
    return f"be_qsoftmax_i8({ctx.tensor(x)}, {ctx.tensor(y)}, {outer}, {shape[axis]}, {inner}, {t}, threads);"


def _qglobal(ctx: Ctx, x: str, y: str, zp: int) -> str:
    shape = ctx.shape(x)
    nc = shape[0] * shape[1]
    if nc == 0:
        return "/* empty */"
    if x in nhwc_int8_tensors(ctx.graph):  # (N, H, W, C) in the arena
        size = ctx.size(x) // nc
        return f"be_qglobal_avgpool_nhwc_i8({ctx.tensor(x)}, {ctx.tensor(y)}, {shape[0]}, {size}, {shape[1]}, {zp});"
    return f"be_qglobal_avgpool_i8({ctx.tensor(x)}, {ctx.tensor(y)}, {nc}, {ctx.size(x) // nc}, {zp}, threads);"


@lower("QGlobalAvgPool", domain="burnedge")
def qglobal_avg_pool(ctx: Ctx, node: Node) -> str:
    require_i8(ctx, [node.inputs[0], node.outputs[0]])
    ctx.require(len(ctx.shape(node.inputs[0])) >= 2, "a global pool needs an input of rank >= 2")
    return _qglobal(ctx, node.inputs[0], node.outputs[0], int(attr(node, "zero_point", 0)))


@lower("QAvgPool", domain="burnedge")
def qavg_pool(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    require_i8(ctx, [x, y])
    zp = int(attr(node, "zero_point", 0))
    window = pool_window(ctx, node)
    if window is None:
        return "/* empty */"
    if window == "global":
        return _qglobal(ctx, x, y, zp)
    args = [*window, zp]
    return f"be_qavgpool2d_i8({ctx.tensor(x)}, {ctx.tensor(y)}, {', '.join(map(str, args))}, threads);"
