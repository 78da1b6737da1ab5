"""RMSNormalization lowering (opset 23): rows of prod(shape[axis:]) values, scale broadcast to those dims."""

from __future__ import annotations

import numpy as np

from ....ir import Node
from . import Ctx, lower
from .norm import _vector, norm_rows
from .reduce import attr, flit


@lower("RMSNormalization")
def rms_normalization(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    ctx.require(ctx.dtype(x) == np.float32, f"no C RMSNormalization on {ctx.dtype(x)}")
    ctx.require(attr(node, "stash_type", 1) == 1, "only stash_type float32")
    shape, a, rows, d = norm_rows(ctx, node)
    if rows * d == 0:
        return "/* empty */"
    scale = _vector(ctx, node.inputs[1], shape[a:], "scale")
    eps = flit(attr(node, "epsilon", 1e-5))
    return f"be_rmsnorm_f32({ctx.tensor(x)}, {ctx.tensor(y)}, {scale}, {rows}, {d}, {eps}, threads);"
