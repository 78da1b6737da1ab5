"""Seeded random ops (the reference: burnedge/ops/random_ops.py): draws fixed at compile time, exact in C.

A seeded node draws the same values at every run, and the static shape fixes how many, so RandomUniform,
RandomNormal and their -Like forms are constants computed by the reference once and stored with the weights.
Bernoulli keeps its probabilities as a run-time input: its uniform draws u are stored and the step gives 1 where
numpy's binomial(1, p) does (u > 1 - p for p <= 0.5, u <= p above, in double). An unseeded node draws afresh each
run, which a deterministic plan does not do: it is refused, asking for a seed.
"""

from __future__ import annotations

import numpy as np

from ....ir import Node
from ....ops.random_ops import _out_dtype, _state, draws
from . import Ctx, ctype, lower
from .reduce import attr


def _seed(ctx: Ctx, node: Node) -> float:
    seed = attr(node, "seed", None)
    ctx.require(seed is not None and not np.isnan(seed),
                f"{node.op_type} has no seed: it would draw afresh every run, and C plans are deterministic "
                "(set the node's seed attribute)")  # fmt: skip
    return seed


@lower("RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike")
def random_constant(ctx: Ctx, node: Node) -> str:
    seed, y = _seed(ctx, node), node.outputs[0]
    kind = "uniform" if "Uniform" in node.op_type else "normal"
    a, b = (attr(node, "low", 0.0), attr(node, "high", 1.0)) if kind == "uniform" else (
        attr(node, "mean", 0.0), attr(node, "scale", 1.0))  # fmt: skip
    values = draws(kind, ctx.shape(y), ctx.dtype(y), seed, a, b)
    ctx.require(values.dtype == ctx.dtype(y), f"drew {values.dtype}, the output is {ctx.dtype(y)}")
    return f"memcpy({ctx.tensor(y)}, {ctx.pack(f'{node.name}/draws', values)}, {values.nbytes});"


@lower("Bernoulli")
def bernoulli(ctx: Ctx, node: Node) -> str:
    seed, x, y = _seed(ctx, node), node.inputs[0], node.outputs[0]
    ctx.require(ctx.dtype(x).name in ("float32", "float64"), f"no C Bernoulli on {ctx.dtype(x)} probabilities")
    ctx.require(ctx.dtype(y) == _out_dtype(attr(node, "dtype", None), np.zeros(0, ctx.dtype(x))), "output dtype")
    u = _state(seed).random_sample(ctx.shape(x)).astype(np.float64)
    return (
        f"{{ const double *u = {ctx.pack(f'{node.name}/draws', u)}; const {ctype(ctx.dtype(x))} *p = {ctx.tensor(x)};\n"
        f"  {ctype(ctx.dtype(y))} *y = {ctx.tensor(y)};\n"
        f"  for (long i = 0; i < {ctx.size(x)}; i++) {{ double q = (double)p[i];\n"
        f"    y[i] = ({ctype(ctx.dtype(y))})(q <= 0.5 ? u[i] > 1.0 - q : u[i] <= q); }}\n}}"
    )
