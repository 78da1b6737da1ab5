"""RMSNormalization lowering (opset 23): rows of prod(shape[axis:]) values, scale broadcast to those dims."""

from __future__ import annotations

import math

import numpy as np

from ....ir import Node
from . import Ctx, lower
from .norm import _vector
from .reduce import attr, flit, norm_axis


@lower("RMSNormalization")
def rms_normalization(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    ctx.require(ctx.dtype(x) == np.float32, f"no C RMSNormalization on {ctx.dtype(x)}")
    ctx.require(attr(node, "stash_type", 1) == 1, "only stash_type float32")
    shape = ctx.shape(x)
    a = norm_axis(ctx, attr(node, "axis", -1), len(shape))
    rows, d = math.prod(shape[:a]), math.prod(shape[a:])
    if rows * d == 0:
        return "/* empty */"
    scale = _vector(ctx, node.inputs[1], shape[a:], "scale")
    eps = flit(attr(node, "epsilon", 1e-5))
    return f"be_rmsnorm_f32({ctx.tensor(x)}, {ctx.tensor(y)}, {scale}, {rows}, {d}, {eps}, threads);"
