"""Elementwise ops and fused chains (`burnedge.Elementwise`, from the fuse_elementwise pass) as one kernel each.

One work item per output element. Each operand gets its broadcast strides over the output shape; dimensions that
every operand walks contiguously are merged, so a same-shape chain indexes with ``i`` alone; scalar constants
become literals; each op of a chain becomes one expression on private variables. Every operand is read before
the output is written, so an in-place output (the planner's alias) is safe.
"""

from __future__ import annotations

import math

import numpy as np

from ...ir import Graph, Node
from .emit import Ctx, cltype, kernel

# op -> OpenCL C expression over operands {0}, {1} ... and attributes {alpha} ... (float32)
FLOAT_EXPR: dict[str, str] = {
    "Add": "({0} + {1})", "Sub": "({0} - {1})", "Mul": "({0} * {1})", "Div": "({0} / {1})",
    "Pow": "pow({0}, {1})", "Sqrt": "sqrt({0})", "Exp": "exp({0})", "Log": "log({0})", "Neg": "(-{0})",
    "Abs": "fabs({0})", "Reciprocal": "(1.0f / {0})", "Floor": "floor({0})", "Ceil": "ceil({0})",
    "Round": "rint({0})", "Sign": "(float)(({0} > 0) - ({0} < 0))", "Erf": "erf({0})",
    "Tanh": "tanh({0})", "Sigmoid": "(1.0f / (1.0f + exp(-{0})))", "Relu": "({0} < 0 ? 0.0f : {0})",
    "Sin": "sin({0})", "Cos": "cos({0})", "Tan": "tan({0})", "Asin": "asin({0})", "Acos": "acos({0})",
    "Atan": "atan({0})", "Sinh": "sinh({0})", "Cosh": "cosh({0})", "Asinh": "asinh({0})",
    "Acosh": "acosh({0})", "Atanh": "atanh({0})", "Softsign": "({0} / (1.0f + fabs({0})))",
    "LeakyRelu": "({0} >= 0 ? {0} : {alpha}f * {0})",
    "Elu": "({0} >= 0 ? {0} : {alpha}f * (exp({0}) - 1.0f))",
    "Selu": "({gamma}f * ({0} > 0 ? {0} : {alpha}f * (exp({0}) - 1.0f)))",
    "HardSigmoid": "be_clamp01({alpha}f * {0} + {beta}f)",
    "HardSwish": "({0} * be_clamp01({0} * (1.0f / 6.0f) + 0.5f))",
    "Softplus": "({0} > 20.0f ? {0} : log1p(exp({0})))",
    "Gelu": "(0.5f * {0} * (1.0f + erf({0} * 0.70710678118654752f)))",
    "PRelu": "({0} >= 0 ? {0} : {1} * {0})", "Max": "be_max({0}, {1})", "Min": "be_min({0}, {1})",
    "ThresholdedRelu": "({0} > {alpha}f ? {0} : 0.0f)",
    "Celu": "({0} > 0 ? {0} : {alpha}f * expm1({0} / {alpha}f))",
    "Mish": "({0} * tanh({0} > 20.0f ? {0} : log1p(exp({0}))))",
    "Shrink": "({0} < -{lambd}f ? {0} + {bias}f : ({0} > {lambd}f ? {0} - {bias}f : 0.0f))",
    "IsInf": "(isinf({0}) && ({0} > 0 ? {detect_positive} : {detect_negative}))",
    "Mod": "fmod({0}, {1})",
}  # fmt: skip
INT_EXPR: dict[str, str] = {
    "Add": "({0} + {1})", "Sub": "({0} - {1})", "Mul": "({0} * {1})", "Neg": "(-{0})",
    "Abs": "({0} < 0 ? -{0} : {0})", "Relu": "({0} > 0 ? {0} : 0)", "Max": "({0} > {1} ? {0} : {1})",
    "Min": "({0} < {1} ? {0} : {1})", "Sign": "(({0} > 0) - ({0} < 0))", "BitwiseAnd": "({0} & {1})",
    "BitwiseOr": "({0} | {1})", "BitwiseXor": "({0} ^ {1})", "BitwiseNot": "(~{0})",
}  # fmt: skip
ANY_EXPR: dict[str, str] = {
    "Equal": "({0} == {1})", "Less": "({0} < {1})", "Greater": "({0} > {1})", "LessOrEqual": "({0} <= {1})",
    "GreaterOrEqual": "({0} >= {1})", "And": "({0} && {1})", "Or": "({0} || {1})", "Xor": "(!{0} != !{1})",
    "Not": "(!{0})", "Where": "({0} ? {1} : {2})", "IsNaN": "isnan({0})",
}  # fmt: skip
TYPES = frozenset("float32 int8 uint8 int16 uint16 int32 uint32 int64 uint64 bool".split())


def literal(x: float | int | bool, dtype: np.dtype) -> str:
    """A scalar of `dtype` as an OpenCL C literal."""
    if dtype.kind == "f":
        x = float(x)
        if math.isnan(x):
            return "NAN"
        if math.isinf(x):
            return "INFINITY" if x > 0 else "-INFINITY"
        return f"{float(np.float32(x))!r}f"
    return f"(({cltype(dtype)}){int(x)})"


def _cast(x: str, src: np.dtype, dst: np.dtype) -> str:
    """Cast as burnedge defines it: NaN -> 0 and saturation for float -> integer, != 0 for bool."""
    if dst == np.bool_:
        return f"(uchar)({x} != 0)"
    if dst.kind in "iu" and src.kind == "f":
        return f"convert_{cltype(dst)}_sat_rtz({x})"
    return f"(({cltype(dst)})({x}))"


def _int_div_mod(op: str, fmod: bool, a: str, b: str, dt: np.dtype) -> str:
    t = cltype(dt)
    if op == "Div":
        return f"({b} == 0 ? ({t})0 : ({t})({a} / {b}))"
    r = f"({a} % {b})"
    if not fmod and dt.kind == "i":
        r = f"({r} != 0 && (({r} < 0) != ({b} < 0)) ? ({t})({r} + {b}) : ({t}){r})"
    return f"({b} == 0 ? {a} : {r})"


def expr(ctx: Ctx, node: Node, args: list[str], types: list[np.dtype], out_t: np.dtype) -> str:
    """The OpenCL C expression of one elementwise op over operand expressions `args`."""
    op = node.op_type
    t0 = types[0] if types else out_t
    ctx.require(all(t.name in TYPES for t in [*types, out_t]), f"no OpenCL elementwise {op} on {t0}")
    if op in ("Cast", "CastLike", "Identity", "Expand"):
        return _cast(args[0], t0, out_t)
    if op == "Clip":
        e = args[0]
        lo, hi = node.attrs.get("min"), node.attrs.get("max")
        lo = args[1] if len(args) > 1 and args[1] else (literal(lo, t0) if lo is not None else None)
        hi = args[2] if len(args) > 2 and args[2] else (literal(hi, t0) if hi is not None else None)
        if lo is not None:
            e = f"({e} < {lo} ? {lo} : {e})"
        if hi is not None:
            e = f"({e} > {hi} ? {hi} : {e})"
        return e
    floaty = t0.kind == "f"
    if op in ("Sum", "Mean", "Max", "Min"):
        pair = (FLOAT_EXPR if floaty else INT_EXPR)["Add" if op in ("Sum", "Mean") else op]
        e = args[0]
        for a in args[1:]:
            e = pair.format(e, a)
        return f"({e} / {len(args)}.0f)" if op == "Mean" else e
    if op == "Gelu" and node.attrs.get("approximate", "none") == "tanh":
        x = args[0]
        return f"(0.5f * {x} * (1.0f + tanh(0.7978845608028654f * ({x} + 0.044715f * {x} * {x} * {x}))))"
    if op in ("Div", "Mod") and not floaty:
        return _int_div_mod(op, bool(node.attrs.get("fmod", 0)), args[0], args[1], t0)
    if op == "Pow" and not floaty:
        return f"(({cltype(out_t)})pow((float){args[0]}, (float){args[1]}))"
    table = ANY_EXPR if op in ANY_EXPR else FLOAT_EXPR if floaty else INT_EXPR
    ctx.require(op in table, f"no OpenCL elementwise {op} on {t0}")
    attrs = {**{k: v for k, v in node.op.attrs.items() if isinstance(v, (int, float))}}
    attrs.update({k: v for k, v in node.attrs.items() if isinstance(v, (int, float))})
    return table[op].format(*args, **attrs)


def strides(shape: tuple[int, ...], out: tuple[int, ...]) -> list[int]:
    """Element strides of an operand of `shape` broadcast to `out` (0 along broadcast dimensions)."""
    full = (1,) * (len(out) - len(shape)) + tuple(shape)
    st, acc = [0] * len(out), 1
    for d in range(len(out) - 1, -1, -1):
        st[d] = acc if full[d] != 1 or out[d] == 1 else 0
        acc *= full[d]
    return st


def merge(dims: list[int], all_strides: list[list[int]]) -> tuple[list[int], list[list[int]]]:
    """Merges adjacent dimensions that every operand walks contiguously (or broadcasts alike)."""
    dims, st = list(dims), [list(s) for s in all_strides]
    for d in range(len(dims) - 2, -1, -1):
        if all(s[d] == s[d + 1] * dims[d + 1] for s in st):
            for s in st:
                s[d] = s[d + 1]
                del s[d + 1]
            dims[d] *= dims[d + 1]
            del dims[d + 1]
    return dims, st


def index_exprs(dims: list[int], all_strides: list[list[int]], var: str = "i") -> tuple[list[str], list[str]]:
    """(statements splitting `var` into coordinates, one offset expression per stride list)."""
    if len(dims) <= 1:
        return [], [var if s and s[0] == 1 else ("0" if not s or s[0] == 0 else f"{var} * {s[0]}") for s in all_strides]
    stmts = [f"long r_ = {var};"]
    for d in range(len(dims) - 1, 0, -1):
        stmts.append(f"const long c{d} = r_ % {dims[d]}; r_ /= {dims[d]};")
    stmts.append("const long c0 = r_;")
    offs = []
    for s in all_strides:
        terms = [f"c{d}" if v == 1 else f"c{d} * {v}" for d, v in enumerate(s) if v]
        offs.append(" + ".join(terms) or "0")
    return stmts, offs


def gen_elementwise(ctx: Ctx, out: str, inputs: list[str], body) -> None:
    """One kernel computing `out` over its shape; `body(operands, types)` gives (statements, final expression)."""
    shape = ctx.shape(out)
    n = ctx.size(out)
    operands, types, streamed = [], [], []
    for k, name in enumerate(inputs):
        if not name:
            operands.append("")
            types.append(np.dtype("float32"))
            continue
        v = ctx.graph.values[name]
        types.append(v.dtype)
        if v.is_const and v.data.size == 1:
            operands.append(literal(v.data.reshape(-1)[0], v.dtype))
        else:
            operands.append(f"v{k}")
            streamed.append((k, name, strides(v.shape, shape)))
    dims, st = merge(list(shape) or [1], [s or [0] for _, _, s in streamed] + [strides(shape, shape) or [1]])
    split, offs = index_exprs(dims, st)
    loads = [
        f"const {cltype(ctx.dtype(name))} v{k} = {ctx.ptr(name)}[{off}];" for (k, name, _), off in zip(streamed, offs)
    ]
    stmts, final = body(operands, types)
    lines = [f"if (i >= {n}) return;", *split, *loads, *stmts, f"{ctx.ptr(out)}[{offs[-1]}] = {final};"]
    ctx.launch("\n  ".join(lines), n, (ctx.local_1d,))


SIMPLE = sorted(set(FLOAT_EXPR) | set(INT_EXPR) | set(ANY_EXPR) | {"Clip", "Sum", "Mean", "Cast", "CastLike", "Expand"})


@kernel(*SIMPLE)
def elementwise(ctx: Ctx, node: Node) -> None:
    out = node.outputs[0]
    ins = list(node.inputs[:1]) if node.op_type in ("Expand", "CastLike") else list(node.inputs)
    out_t = ctx.dtype(out)
    gen_elementwise(ctx, out, ins, lambda a, t: ([], expr(ctx, node, a, t, out_t)))


@kernel("Elementwise", domain="burnedge")
def fused(ctx: Ctx, node: Node) -> None:
    """A fused chain: every inner op one private variable, the whole chain one kernel."""
    body: Graph = node.attrs["body"]

    def chain(args: list[str], types: list[np.dtype]) -> tuple[list[str], str]:
        env = dict(zip(body.inputs, zip(args, types)))
        for name, v in body.values.items():
            if v.is_const and name not in env:
                ctx.require(v.data.size == 1, f"fused chain constant {name!r} is not a scalar")
                env[name] = (literal(v.data.reshape(-1)[0], v.dtype), v.dtype)
        stmts = []
        for k, inner in enumerate(body.nodes):
            ops = [env[i] if i else ("", np.dtype("float32")) for i in inner.inputs]
            if inner.op_type in ("Expand", "CastLike"):
                ops = ops[:1]
            out_v = body.values[inner.outputs[0]]
            e = expr(ctx, inner, [o[0] for o in ops], [o[1] for o in ops], out_v.dtype)
            stmts.append(f"const {cltype(out_v.dtype)} t{k} = {e};")
            env[inner.outputs[0]] = (f"t{k}", out_v.dtype)
        return stmts, env[body.outputs[0]][0]

    gen_elementwise(ctx, node.outputs[0], list(node.inputs), chain)
