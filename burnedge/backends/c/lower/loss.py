"""Loss lowerings: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (kernels/loss.h).

The input [N, C, d1, ..., dk] is seen as [n, c, d] (d = d1 * ... * dk, 1 for [N, C]) and the targets [N, d1, ...]
as [n, d]; float32 or float64 values, int32 or int64 targets, optional per-class weights (a constant or an
activation), ignore_index and reduction none / sum / mean; SoftmaxCrossEntropyLoss also writes its optional
log_prob output. The semantics (clamped class index, mean over the weights taken) are burnedge/ops/loss.py's.
"""

from __future__ import annotations

import math

from ....ir import Node
from . import Ctx, lower
from .reduce import attr

REDUCTIONS = {"none": "BE_LOSS_NONE", "sum": "BE_LOSS_SUM", "mean": "BE_LOSS_MEAN"}
SUFFIX = {"float32": "f32", "float64": "f64", "int32": "i32", "int64": "i64"}


@lower("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss")
def loss(ctx: Ctx, node: Node) -> str:
    x, target, out = node.inputs[0], node.inputs[1], node.outputs[0]
    weight = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2] else ""
    dt, tt = ctx.dtype(x).name, ctx.dtype(target).name
    ctx.require(dt in ("float32", "float64"), f"input dtype must be float32 or float64, not {dt}")
    ctx.require(tt in ("int32", "int64"), f"target dtype must be int32 or int64, not {tt}")
    if weight:
        ctx.require(ctx.dtype(weight).name == dt, f"weight dtype {ctx.dtype(weight)} is not the input's {dt}")
    shape, tshape = ctx.shape(x), ctx.shape(target)
    ctx.require(len(shape) >= 2, f"input must have rank >= 2 ([N, C, ...]), not {len(shape)}")
    n, c, d = shape[0], shape[1], math.prod(shape[2:])
    ctx.require(tshape == (n, *shape[2:]), f"target shape {list(tshape)} does not fit input shape {list(shape)}")
    if weight:
        ctx.require(ctx.size(weight) == c, f"weight has {ctx.size(weight)} values, not C = {c}")
    reduction = attr(node, "reduction", "mean")
    reduction = reduction.decode() if isinstance(reduction, bytes) else reduction
    ctx.require(reduction in REDUCTIONS, f"reduction must be 'none', 'sum' or 'mean', not {reduction!r}")
    ii = attr(node, "ignore_index", None)
    ctx.require(c > 0 or n * d == 0, "an input with C = 0 classes")
    if ctx.size(out) == 0:
        return "/* empty */"
    w = ctx.tensor(weight) if weight else "NULL"
    common = f"{ctx.tensor(x)}, {ctx.tensor(target)}, {w}, {ctx.tensor(out)}"
    tail = f"{n}, {c}, {d}, {int(ii or 0)}L, {int(ii is not None)}, {REDUCTIONS[reduction]}, threads);"
    fn = f"{SUFFIX[dt]}_{SUFFIX[tt]}"
    if node.op_type == "NegativeLogLikelihoodLoss":
        return f"be_nll_loss_{fn}({common}, {tail}"
    log_prob = node.outputs[1] if len(node.outputs) > 1 and node.outputs[1] else ""
    lp = ctx.tensor(log_prob) if log_prob and log_prob in ctx.plan.offsets else "NULL"
    return f"be_sce_loss_{fn}({common}, {lp}, {tail}"
