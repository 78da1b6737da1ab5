"""BatchNormalization with run-time scale, B, mean or var, or in training mode (norm.py folds the constant case).

Per channel, as the reference (`ops/normalization._batchnorm`), in the input's float type:
1. the statistics: the given mean and var, or in training mode the batch's mean and (population) variance over
   N and the spatial dims, summed in double;
2. k = scale / sqrt(var + epsilon), shift = B - mean * k, and y = x * k + shift;
3. the extra outputs: training gives running_mean = mean_in * momentum + batch_mean * (1 - momentum) (and var
   alike), opsets before 14 also the batch mean and 1 / sqrt(batch_var + epsilon) (the saved statistics, as
   onnxruntime stores them); an inference node that lists extra outputs passes mean and var through.
`spatial=0` (opsets < 9) has one channel per activation of x.shape[1:].
"""

from __future__ import annotations

import math

import numpy as np

from ....ir import Node
from . import Ctx, ctype
from .reduce import attr


def _training(node: Node) -> bool:
    outs = [o for o in node.outputs if o]
    if node.op.since >= 14:
        return bool(attr(node, "training_mode", 0))
    return len(outs) > 1 and not attr(node, "is_test", 0)


def needs_general(ctx: Ctx, node: Node) -> bool:
    """Whether the node needs this lowering: run-time parameters, training mode or more than one output."""
    params_const = all(ctx.const(n) is not None for n in node.inputs[1:5])
    return not params_const or _training(node) or len([o for o in node.outputs if o]) > 1


def batch_norm_general(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    dt = ctx.dtype(x)
    ctx.require(dt in (np.float32, np.float64), f"no C BatchNormalization on {dt}")
    shape = ctx.shape(x)
    ctx.require(len(shape) >= 2, "an input of rank < 2")
    spatial = node.op.since >= 9 or bool(attr(node, "spatial", 1))
    n, c, size = (shape[0], shape[1], math.prod(shape[2:])) if spatial else (shape[0], math.prod(shape[1:]), 1)
    for name in node.inputs[1:5]:
        ctx.require(ctx.size(name) == c, f"{name!r} has {ctx.size(name)} values, expected one per channel ({c})")
        ctx.require(ctx.dtype(name).kind == "f", f"{name!r} is {ctx.dtype(name)}, expected a float type")
    if ctx.size(x) == 0:
        return "/* empty */"
    training = _training(node)
    outs = [o if o and o in ctx.plan.offsets else "" for o in node.outputs[1:]]
    ct, eps, mom = ctype(dt), float(attr(node, "epsilon", 1e-5)), float(attr(node, "momentum", 0.9))
    s, b, mean, var = (ctx.tensor(name) for name in node.inputs[1:5])
    cnt = n * size
    lines = [
        "{",
        f"  const {ct} *xp = {ctx.tensor(x)};",
        f"  {ct} *yp = {ctx.tensor(y)};",
        f"  const {ct} eps = ({ct}){eps!r}, mom = ({ct}){mom!r}, rest = ({ct}){1 - mom!r};",
        "  (void)mom; (void)rest;",
        f"  for (long ch = 0; ch < {c}; ch++) {{",
        f"    {ct} mu = ({ct}){mean}[ch], va = ({ct}){var}[ch];",
    ]
    if training:
        lines += [
            "    double acc = 0.0, sq = 0.0;",
            f"    for (long i = 0; i < {n}; i++)",
            f"      for (long e = 0; e < {size}; e++) acc += xp[(i * {c} + ch) * {size} + e];",
            f"    mu = ({ct})(acc / {cnt});",
            f"    for (long i = 0; i < {n}; i++)",
            f"      for (long e = 0; e < {size}; e++) {{",
            f"        const double d = (double)xp[(i * {c} + ch) * {size} + e] - mu;",
            "        sq += d * d;",
            "      }",
            f"    va = ({ct})(sq / {cnt});",
        ]
    sqrt = "sqrtf" if ct == "float" else "sqrt"
    lines += [
        f"    const {ct} k = ({ct}){s}[ch] / {sqrt}(va + eps), sh = ({ct}){b}[ch] - mu * k;",
        f"    for (long i = 0; i < {n}; i++)",
        f"      for (long e = 0; e < {size}; e++) {{ const long at = (i * {c} + ch) * {size} + e; "
        "yp[at] = xp[at] * k + sh; }",
    ]
    lines += _extra_outputs(ctx, node, outs, training, mean, var, sqrt)
    lines += ["  }", "}"]
    return "\n".join(lines)


def _extra_outputs(ctx: Ctx, node: Node, outs: list[str], training: bool, mean: str, var: str, sqrt: str):
    """C statements writing the outputs after y, inside the channel loop (mu, va, eps, mom, rest = 1 - mom set)."""
    if training:
        exprs = [f"{mean}[ch] * mom + mu * rest", f"{var}[ch] * mom + va * rest", "mu", f"1 / {sqrt}(va + eps)"]
    else:
        exprs = [f"{mean}[ch]", f"{var}[ch]", f"{mean}[ch]", f"{var}[ch]"]
    lines = []
    for name, expr in zip(outs, exprs, strict=False):
        if name:
            ct = ctype(ctx.dtype(name))
            lines.append(f"    {ctx.tensor(name)}[ch] = ({ct})({expr});")
    return lines
