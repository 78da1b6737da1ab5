"""Optimizer steps of ai.onnx.preview.training (burnedge/ops/training.py): Adagrad, Momentum and Adam, one
generated loop per optimized tensor.

The learning rate R and the step count T are read at run time; the rate's scalar factor is computed in double,
as the reference computes it from Python floats, then every elementwise step runs in the tensors' type with the
attribute constants rounded to it, as numpy rounds a Python float against a float32 array. Outputs left out of the
node are not written.
"""

from __future__ import annotations

from ....ir import Node
from . import Ctx, ctype, lower
from .reduce import attr, flit

__all__: list[str] = []

TRAINING = "ai.onnx.preview.training"
FLOAT_TYPES = ("float32", "float64")


def _lit(value: float, double: bool) -> str:
    """`value` as a C literal of the compute type (in float32, rounded as numpy rounds it)."""
    return repr(float(value)) if double else flit(value)


def _tensors(ctx: Ctx, node: Node, kinds: int) -> tuple[str, list[list[str]], list[list[str]]]:
    """(C type, per optimized tensor its inputs [x, g, states...], and its outputs [x', states'...])."""
    ins, outs = list(node.inputs[2:]), list(node.outputs)
    ctx.require(len(node.inputs) >= 2 and all(node.inputs[:2]), "R and T are required")
    ctx.require(len(ins) % kinds == 0 and ins, f"{len(ins)} inputs after R and T, expected a multiple of {kinds}")
    n = len(ins) // kinds
    ctx.require(len(outs) <= n * (kinds - 1), f"{len(outs)} outputs for {n} optimized tensor(s)")
    outs += [""] * (n * (kinds - 1) - len(outs))
    dts = {ctx.dtype(t).name for t in ins if t} | {ctx.dtype(t).name for t in outs if t}
    ctx.require(len(dts) == 1 and dts <= set(FLOAT_TYPES), f"tensors of types {sorted(dts)}: all float32 or float64")
    ctx.require(all(ins), "an optimized tensor, gradient or state is missing")
    groups_in = [[ins[k * n + i] for k in range(kinds)] for i in range(n)]
    groups_out = [[outs[k * n + i] for k in range(kinds - 1)] for i in range(n)]
    for gi, go in zip(groups_in, groups_out):
        sizes = {ctx.size(t) for t in gi + go if t}
        ctx.require(len(sizes) == 1, f"tensors {gi + [o for o in go if o]} differ in size")
    r, t = node.inputs[:2]
    ctx.require(ctx.dtype(r).name in FLOAT_TYPES and ctx.size(r) == 1, f"R must be one float, not {ctx.dtype(r)}")
    ctx.require(ctx.dtype(t).name == "int64" and ctx.size(t) == 1, f"T must be one int64, not {ctx.dtype(t)}")
    return ctype(dts.pop()), groups_in, groups_out


def _loops(ctx: Ctx, ct: str, prelude: list[str], groups_in, groups_out, body: list[str], names: str) -> str:
    """A block: `prelude` (scalars), then per tensor a loop binding inputs to locals `names[k]` and running
    `body`, which assigns the locals named by the outputs (`x1`, `s1`, ...)."""
    lines = ["{", *("  " + p for p in prelude)]
    for gi, go in zip(groups_in, groups_out):
        n = ctx.size(gi[0])
        if n == 0:
            continue
        lines.append(f"  for (long i = 0; i < {n}; i++) {{")
        lines += [f"    const {ct} {v} = {ctx.tensor(t)}[i];" for v, t in zip(names, gi)]
        lines += ["    " + b for b in body]
        outs = ["x1", *[f"s{k}1" for k in range(1, len(go))]]
        lines += [f"    {ctx.tensor(o)}[i] = {v};" for v, o in zip(outs, go) if o]
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines)


@lower("Adagrad", domain=TRAINING)
def adagrad(ctx: Ctx, node: Node) -> str:
    ct, gin, gout = _tensors(ctx, node, 3)
    d = ct == "double"
    decay, eps, norm = (float(attr(node, k, v)) for k, v in (("decay_factor", 0.0), ("epsilon", 1e-6),
                                                              ("norm_coefficient", 0.0)))  # fmt: skip
    r, t = (ctx.tensor(v) for v in node.inputs[:2])
    prelude = [f"const {ct} rate = ({ct})((double){r}[0] / (1.0 + (double){t}[0] * {decay!r}));"]
    body = [
        f"const {ct} gr = {_lit(norm, d)} * x + g;",
        f"const {ct} s11 = s1 + gr * gr;",
        f"const {ct} x1 = x - rate * gr / ({'sqrt' if d else 'sqrtf'}(s11) + {_lit(eps, d)});",
    ]
    return _loops(ctx, ct, prelude, gin, gout, body, ["x", "g", "s1"])


@lower("Momentum", domain=TRAINING)
def momentum(ctx: Ctx, node: Node) -> str:
    ct, gin, gout = _tensors(ctx, node, 3)
    d = ct == "double"
    mode = attr(node, "mode")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    ctx.require(mode in ("standard", "nesterov"), f"mode is {mode!r}, expected 'standard' or 'nesterov'")
    alpha, beta, norm = (float(attr(node, k)) for k in ("alpha", "beta", "norm_coefficient"))
    r, t = (ctx.tensor(v) for v in node.inputs[:2])
    prelude = [f"const {ct} rate = ({ct}){r}[0];",
               f"const {ct} beta = {t}[0] > 0 ? {_lit(beta, d)} : ({ct})1;"]  # fmt: skip
    step = "s11" if mode == "standard" else f"(gr + {_lit(alpha, d)} * s11)"
    body = [
        f"const {ct} gr = {_lit(norm, d)} * x + g;",
        f"const {ct} s11 = {_lit(alpha, d)} * s1 + beta * gr;",
        f"const {ct} x1 = x - rate * {step};",
    ]
    return _loops(ctx, ct, prelude, gin, gout, body, ["x", "g", "s1"])


@lower("Adam", domain=TRAINING)
def adam(ctx: Ctx, node: Node) -> str:
    ct, gin, gout = _tensors(ctx, node, 4)
    d, sqrt = ct == "double", "sqrt" if ct == "double" else "sqrtf"
    alpha, beta, eps, norm, post = (float(attr(node, k, v)) for k, v in (
        ("alpha", 0.9), ("beta", 0.999), ("epsilon", 1e-6), ("norm_coefficient", 0.0), ("norm_coefficient_post", 0.0)
    ))  # fmt: skip
    r, t = (ctx.tensor(v) for v in node.inputs[:2])
    prelude = [
        f"const double step = (double){t}[0];",
        f"const {ct} rate = ({ct})(step > 0 ? (double){r}[0] * sqrt(1.0 - pow({beta!r}, step)) / "
        f"(1.0 - pow({alpha!r}, step)) : (double){r}[0]);",
    ]
    body = [
        f"const {ct} gr = {_lit(norm, d)} * x + g;",
        f"const {ct} s11 = {_lit(alpha, d)} * s1 + {_lit(1 - alpha, d)} * gr;",
        f"const {ct} s21 = {_lit(beta, d)} * s2 + {_lit(1 - beta, d)} * (gr * gr);",
        f"const {ct} x1 = {_lit(1 - post, d)} * (x - rate * (s11 / ({sqrt}(s21) + {_lit(eps, d)})));",
    ]
    return _loops(ctx, ct, prelude, gin, gout, body, ["x", "g", "s1", "s2"])
