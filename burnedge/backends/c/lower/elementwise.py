"""Elementwise ops and fused elementwise chains, generated as one loop with constant shapes and broadcasting.

A single elementwise node and a `burnedge.Elementwise` node (a chain fused by the passes) go through the same
generator: every external input gets its broadcast strides over the output shape; dimensions that are contiguous
for every operand are merged; scalar constants become literals; each op of the chain becomes one C expression
on locals. Reading every operand before writing the output makes the loop safe in place.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np

from .... import dtypes
from ....ir import Graph, Node
from . import Ctx, ctype, lower, storage_ctype
from .storage import FLOAT8, SMALL_INT_BITS, STORAGE, compute_ctype, compute_dtype, load, roundtrip, store

# op -> C expression over its operands {0}, {1}, ... and attributes {alpha} ...; float forms use float math, and a
# NaN passes Relu, Max, Min and the clamps as it does numpy's maximum/minimum/clip (burnedge.h be_maxf ...)
FLOAT_EXPR: dict[str, str] = {
    "Add": "({0} + {1})", "Sub": "({0} - {1})", "Mul": "({0} * {1})", "Div": "({0} / {1})",
    "Pow": "powf({0}, {1})", "Sqrt": "sqrtf({0})", "Exp": "expf({0})", "Log": "logf({0})", "Neg": "(-{0})",
    "Abs": "fabsf({0})", "Reciprocal": "(1.0f / {0})", "Floor": "floorf({0})", "Ceil": "ceilf({0})",
    "Round": "nearbyintf({0})", "Sign": "(float)(({0} > 0) - ({0} < 0))", "Erf": "erff({0})",
    "Tanh": "tanhf({0})", "Sigmoid": "(1.0f / (1.0f + expf(-{0})))", "Relu": "({0} < 0 ? 0.0f : {0})",
    "Sin": "sinf({0})", "Cos": "cosf({0})", "Softsign": "({0} / (1.0f + fabsf({0})))",
    "LeakyRelu": "({0} >= 0 ? {0} : {alpha}f * {0})",
    "Elu": "({0} >= 0 ? {0} : {alpha}f * (expf({0}) - 1.0f))",
    "Selu": "({gamma}f * ({0} > 0 ? {0} : {alpha}f * (expf({0}) - 1.0f)))",
    "HardSigmoid": "be_clamp01({alpha}f * {0} + {beta}f)",
    "HardSwish": "({0} * be_clamp01({0} * (1.0f / 6.0f) + 0.5f))",
    "Softplus": "({0} > 20.0f ? {0} : log1pf(expf({0})))",
    "Gelu": "(0.5f * {0} * (1.0f + erff({0} * 0.70710678118654752f)))",
    "PRelu": "({0} >= 0 ? {0} : {1} * {0})",
    "Max": "be_maxf({0}, {1})", "Min": "be_minf({0}, {1})",
    "Tan": "tanf({0})", "Asin": "asinf({0})", "Acos": "acosf({0})", "Atan": "atanf({0})", "Sinh": "sinhf({0})",
    "Cosh": "coshf({0})", "Asinh": "asinhf({0})", "Acosh": "acoshf({0})", "Atanh": "atanhf({0})",
    "ThresholdedRelu": "({0} > {alpha}f ? {0} : 0.0f)",
    "Celu": "({0} > 0 ? {0} : {alpha}f * expm1f({0} / {alpha}f))",
    "Swish": "({0} / (1.0f + expf(-{alpha}f * {0})))",
    "Mish": "({0} * tanhf({0} > 20.0f ? {0} : log1pf(expf({0}))))",
    "Shrink": "({0} < -{lambd} ? {0} + {bias} : ({0} > {lambd} ? {0} - {bias} : 0))",
    "IsInf": "(isinf({0}) && ({0} > 0 ? {detect_positive} : {detect_negative}))",
}  # fmt: skip


def _double_form(expr: str) -> str:
    """The float64 form of a FLOAT_EXPR entry: the same expression over the double math functions and literals, so
    a float64 tensor computes in real double arithmetic as numpy does."""
    expr = re.sub(r"\b([a-z0-9]+)f\(", lambda m: (m[1] if m[1] in _MATHF else m[0][:-1]) + "(", expr)
    expr = re.sub(r"\bbe_(maxf|minf|clamp01)\(", lambda m: f"be_{m[1].rstrip('f')}d(", expr)
    expr = re.sub(r"(\d|\})f\b", r"\1", expr)
    return expr.replace("(float)", "(double)")


# the C math functions whose float forms FLOAT_EXPR names (`expf` -> `exp` in double)
_MATHF = {"pow", "sqrt", "exp", "expm1", "log", "fabs", "floor", "ceil", "nearbyint", "erf", "tanh", "sin", "cos",
          "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log1p", "fmod"}  # fmt: skip
DOUBLE_EXPR: dict[str, str] = {op: _double_form(e) for op, e in FLOAT_EXPR.items()}
INT_EXPR: dict[str, str] = {
    "Add": "({0} + {1})", "Sub": "({0} - {1})", "Mul": "({0} * {1})",
    "Neg": "(-{0})", "Abs": "({0} < 0 ? -{0} : {0})", "Relu": "({0} > 0 ? {0} : 0)",
    "Max": "({0} > {1} ? {0} : {1})", "Min": "({0} < {1} ? {0} : {1})", "Sign": "(({0} > 0) - ({0} < 0))",
    "BitwiseAnd": "({0} & {1})", "BitwiseOr": "({0} | {1})", "BitwiseXor": "({0} ^ {1})", "BitwiseNot": "(~{0})",
    "Shrink": "({0} < -{lambd} ? {0} + {bias} : ({0} > {lambd} ? {0} - {bias} : 0))",
}  # fmt: skip
ANY_EXPR: dict[str, str] = {
    "Equal": "({0} == {1})", "Less": "({0} < {1})", "Greater": "({0} > {1})", "LessOrEqual": "({0} <= {1})",
    "GreaterOrEqual": "({0} >= {1})", "And": "({0} && {1})", "Or": "({0} || {1})", "Xor": "(!{0} != !{1})",
    "Not": "(!{0})", "Where": "({0} ? {1} : {2})", "Cast": "{0}", "CastLike": "{0}", "IsNaN": "isnan({0})",
}  # fmt: skip
FLOAT_TYPES = ("float32", "float64")
INT_TYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")


def _local_ctype(dtype: np.dtype) -> str:
    """The C type of a loop local holding a value of `dtype` (its compute type for the storage types)."""
    return compute_ctype(dtype) or ctype(dtype)


def _literal(x: float | int | bool, dtype: np.dtype) -> str:
    if dtypes.is_float(dtype):
        x = float(x)
        if math.isnan(x):
            return "NAN"
        if math.isinf(x):
            return "INFINITY" if x > 0 else "-INFINITY"
        if dtype == np.float64:
            return repr(x)
        return f"{np.float32(x)!r}".replace("np.float32(", "").rstrip(")") + "f"
    return f"(({_local_ctype(dtype)}){int(x)})"


def _cast(node: Node, x: str, in_t: np.dtype, out_t: np.dtype) -> str:
    """The C expression of Cast / CastLike of `x` (a value of `in_t` in its compute type) to `out_t`, as the
    reference's _cast: float8 saturates unless saturate=0 (float inputs only), the 4-/2-bit integers truncate and
    wrap, float8e8m0 follows round_mode; the result is in `out_t`'s compute type."""
    name = out_t.name
    if out_t == np.bool_:
        return f"({x} != 0)"
    if name in SMALL_INT_BITS:
        wrapped = f"be_float_to_wrapped({x}, {SMALL_INT_BITS[name]})" if dtypes.is_float(in_t) else f"(int64_t)({x})"
        return roundtrip(wrapped, out_t)
    if name in STORAGE:
        sat = int(node.attrs.get("saturate", 1)) if (name in FLOAT8 and dtypes.is_float(in_t)) else 0
        if name == "float8_e8m0fnu":
            return roundtrip(x, out_t, int(node.attrs.get("saturate", 1)), node.attrs.get("round_mode", "up"))
        return roundtrip(x, out_t, sat)
    if out_t.kind in "iu" and dtypes.is_float(in_t):
        return _float_to_int(x, compute_dtype(in_t), out_t)
    return f"(({ctype(out_t)})({x}))"


def _expr(ctx: Ctx, node: Node, args: list[str], in_types: list[np.dtype], out_t: np.dtype) -> str:
    """The C expression of one elementwise op over operand expressions `args`, giving type `out_t`."""
    op = node.op_type
    if op in ("Cast", "CastLike"):
        # a cast may also reach double: the value is exact, and C converts double like numpy's astype
        known = FLOAT_TYPES + INT_TYPES + ("bool", "float64", *STORAGE)
        ctx.require(out_t.name in known, f"no C cast to {out_t}")
        return _cast(node, args[0], in_types[0], out_t)
    in_types = [compute_dtype(t) for t in in_types]  # float16, bfloat16, float8... compute in float32
    double = in_types[0] == np.float64
    ftab = DOUBLE_EXPR if double else FLOAT_EXPR
    if op == "Clip":
        lo = node.attrs.get("min", None)
        hi = node.attrs.get("max", None)
        e = args[0]
        if len(args) > 1 and args[1]:
            e = f"({e} < {args[1]} ? {args[1]} : {e})"
        elif lo is not None:
            e = f"({e} < {_literal(lo, in_types[0])} ? {_literal(lo, in_types[0])} : {e})"
        if len(args) > 2 and args[2]:
            e = f"({e} > {args[2]} ? {args[2]} : {e})"
        elif hi is not None:
            e = f"({e} > {_literal(hi, in_types[0])} ? {_literal(hi, in_types[0])} : {e})"
        return e
    if op in ("Sum", "Mean", "Max", "Min") and len(args) != 2:
        ctx.require(len(args) >= 1, f"{op} without inputs")
        if len(args) == 1:
            return args[0]
        pair = ftab[op if op in ("Max", "Min") else "Add"]
        e = args[0]
        for a in args[1:]:
            e = pair.format(e, a)
        return f"({e} / {len(args)}.0f)" if op == "Mean" else e
    if op == "Gelu" and node.attrs.get("approximate", "none") == "tanh":
        x = args[0]
        e = f"(0.5f * {x} * (1.0f + tanhf(0.7978845608028654f * ({x} + 0.044715f * {x} * {x} * {x}))))"
        return _double_form(e) if double else e
    if op == "Sum":
        return f"({args[0]} + {args[1]})"
    if op == "Mean":
        return f"(({args[0]} + {args[1]}) / 2.0f)"
    if op == "Pow" and in_types[0].kind in "iu":  # numpy: int ** int wraps; int ** float goes through double
        if in_types[1].kind == "f":
            return f"pow((double){args[0]}, (double){args[1]})"
        return f"be_powi((int64_t){args[0]}, (int64_t){args[1]})"
    if op == "Mod" and in_types[0].kind == "f":
        return f"{'fmod' if double else 'fmodf'}({args[0]}, {args[1]})"
    if op in ("Div", "Mod") and in_types[0].kind in "iu":
        return _int_div_mod(op, bool(node.attrs.get("fmod", 0)), *args, in_types[0])
    table = ANY_EXPR if op in ANY_EXPR else ftab if in_types[0].name in FLOAT_TYPES else INT_EXPR
    if in_types[0].name not in FLOAT_TYPES + INT_TYPES + ("bool",):
        ctx.require(False, f"the C backend has no elementwise {op} on {in_types[0]}")
    ctx.require(op in table, f"the C backend has no elementwise {op} on {in_types[0]}")
    attrs = {k: v for k, v in node.attrs.items() if isinstance(v, (int, float))}
    defaults = {k: v for k, v in node.op.attrs.items() if isinstance(v, (int, float))}
    return table[op].format(*args, **{**defaults, **attrs})


def _int_div_mod(op: str, fmod: bool, a: str, b: str, dt: np.dtype) -> str:
    """Integer Div / Mod as burnedge defines them (burnedge/ops/_intmath.py): `x / 0 == 0`, `x % 0 == x`,
    `INT_MIN / -1 == INT_MIN` (negated through the unsigned type: no undefined behaviour), `INT_MIN % -1 == 0`;
    no operand reaches C's `/` or `%` that could trap."""
    t = ctype(dt)
    if op == "Div":
        if dt.kind == "u":
            return f"({b} == 0 ? ({t})0 : ({t})({a} / {b}))"
        neg = f"({t})(0u - ({ctype(np.dtype('u' + dt.name))}){a})"
        return f"({b} == 0 ? ({t})0 : {b} == -1 ? {neg} : ({t})({a} / {b}))"
    if dt.kind == "u":
        return f"({b} == 0 ? {a} : ({t})({a} % {b}))"
    r = f"({a} % {b})"
    if not fmod:  # the remainder takes the divisor's sign
        r = f"({r} != 0 && (({r} < 0) != ({b} < 0)) ? ({t})({r} + {b}) : ({t}){r})"
    return f"({b} == 0 ? {a} : {b} == -1 ? ({t})0 : {r})"


def _float_to_int(x: str, src: np.dtype, to: np.dtype) -> str:
    """A float -> integer cast as burnedge defines it: NaN -> 0, beyond the range saturated, else truncated (C
    leaves the first two undefined). The bounds are powers of two, exact in float and double."""
    f = "f" if src == np.float32 else ""
    bits = to.itemsize * 8
    t = ctype(to)
    if to.kind == "u":
        top, low, at_low = f"{float(2**bits)!r}{f}", f"-1.0{f}", "0"
    else:
        top, low, at_low = (
            f"{float(2 ** (bits - 1))!r}{f}",
            f"{-float(2 ** (bits - 1))!r}{f}",
            f"({t}){np.iinfo(to).min}",
        )
    if to == np.int64:
        at_low = "INT64_MIN"
    return f"(isnan({x}) ? ({t})0 : {x} >= {top} ? ({t}){np.iinfo(to).max}u : {x} <= {low} ? {at_low} : ({t})({x}))"


def _strides(shape: tuple[int, ...], out: tuple[int, ...]) -> list[int]:
    """Element strides of an operand of `shape` broadcast to `out` (0 along broadcast dimensions)."""
    full = (1,) * (len(out) - len(shape)) + tuple(shape)
    strides, acc = [0] * len(out), 1
    for d in range(len(out) - 1, -1, -1):
        strides[d] = acc if full[d] != 1 or out[d] == 1 else 0
        acc *= full[d]
    return strides


def _merge(out: tuple[int, ...], strides: list[list[int]]) -> tuple[list[int], list[list[int]]]:
    """Merges adjacent dims that every operand walks contiguously (or all broadcast alike)."""
    dims = list(out)
    st = [list(s) for s in strides]
    d = len(dims) - 2
    while d >= 0:
        if all(s[d] == s[d + 1] * dims[d + 1] for s in st):
            for s in st:
                s[d] = s[d + 1]
                del s[d + 1]
            dims[d] *= dims[d + 1]
            del dims[d + 1]
        d -= 1
    return dims, st


Body = Callable[[list[str], list[np.dtype]], tuple[list[str], str]]


def gen_loop(ctx: Ctx, out: str, inputs: list[str], body: Body) -> str:
    """C code computing out[i] over out's shape, with broadcasting.

    `body(operands, types)` returns the statements computing locals and the final expression.
    """
    shape = ctx.shape(out)
    n = ctx.size(out)
    if n == 0:
        return "/* empty */"
    operands: list[str] = []
    types = [ctx.dtype(i) if i else np.dtype("float32") for i in inputs]
    streamed: list[tuple[str, list[int]]] = []
    for k, name in enumerate(inputs):
        if not name:
            operands.append("")
            continue
        v = ctx.graph.values[name]
        if v.is_const and v.data.size == 1:
            operands.append(_literal(v.data.reshape(-1)[0], v.dtype))
        else:
            var = f"in{k}"
            operands.append(var)
            st = storage_ctype(v.dtype)
            streamed.append((f"const {st} *{var}p = {ctx.tensor(name, st)};", _strides(v.shape, shape), v.dtype))
    dims, strides = _merge(shape, [s for _, s, _ in streamed] + [_strides(shape, shape)])
    out_stride = strides[-1]
    decls = [d for d, _, _ in streamed]
    idx = ["i" + str(d) for d in range(len(dims))]

    def offset(st: list[int]) -> str:
        terms = [f"{i} * {s}" if s != 1 else i for i, s in zip(idx, st) if s]
        return " + ".join(terms) or "0"

    loads = []
    for (decl, _, dt), st in zip(streamed, strides):
        var = decl.split("*")[1].split("p =")[0].strip()
        loads.append(f"const {_local_ctype(dt)} {var} = {load(f'{var}p[{offset(st)}]', dt)};")
    stmts, expr = body(operands, types)
    out_dt = ctx.dtype(out)
    out_t = storage_ctype(out_dt)
    final = store(expr, out_dt) if out_dt.name in STORAGE else f"({out_t})({expr})"
    lines = ["{", *("  " + d for d in decls), f"  {out_t} *outp = {ctx.tensor(out, out_t)};"]
    parallel = n >= 1 << 16 and dims[0] > 1  # the outer loop split over the worker pool
    for d, (i, size) in enumerate(zip(idx, dims)):
        lo, hi = ("lo", "hi") if parallel and d == 0 else ("0", size)
        lines.append("  " * (d + 1) + f"for (long {i} = {lo}; {i} < {hi}; {i}++) {{")
    pad = "  " * (len(dims) + 1)
    lines += [pad + ld for ld in loads]
    lines += [pad + st for st in stmts]
    lines.append(pad + f"outp[{offset(out_stride)}] = {final};")
    lines += ["  " * (d + 1) + "}" for d in range(len(dims) - 1, -1, -1)]
    lines.append("}")
    if parallel:
        task = ctx.task(lines)
        return f"{{ be_step_args a = {{arena, weights}}; be_parallel(threads, {dims[0]}, {task}, &a); }}"
    return "\n".join(lines)


SIMPLE = sorted(set(FLOAT_EXPR) | set(INT_EXPR) | set(ANY_EXPR) | {"Clip", "Sum", "Mean", "Mod"})


@lower(*SIMPLE)
def elementwise(ctx: Ctx, node: Node) -> str:
    out_t = ctx.dtype(node.outputs[0])
    return gen_loop(ctx, node.outputs[0], list(node.inputs), lambda a, t: ([], _expr(ctx, node, a, t, out_t)))


@lower("Elementwise", domain="burnedge")
def fused(ctx: Ctx, node: Node) -> str:
    body: Graph = node.attrs["body"]

    def chain(args: list[str], types: list[np.dtype]) -> tuple[list[str], str]:
        env = dict(zip(body.inputs, zip(args, types)))
        stmts: list[str] = []
        for name, v in body.values.items():
            if v.is_const and name not in env:
                ctx.require(v.data.size == 1, f"fused chain constant {name!r} is not a scalar")
                env[name] = (_literal(v.data.reshape(-1)[0], v.dtype), v.dtype)
        for k, inner in enumerate(body.nodes):
            operands = [env[i] if i else ("", np.dtype("float32")) for i in inner.inputs]
            out_v = body.values.get(inner.outputs[0])
            ctx.require(out_v is not None, f"fused chain value {inner.outputs[0]!r} has no type")
            expr = _expr(ctx, inner, [o[0] for o in operands], [o[1] for o in operands], out_v.dtype)
            stmts.append(f"const {_local_ctype(out_v.dtype)} t{k} = {roundtrip(expr, out_v.dtype)};")
            env[inner.outputs[0]] = (f"t{k}", out_v.dtype)
        return stmts, env[body.outputs[0]][0]

    return gen_loop(ctx, node.outputs[0], list(node.inputs), chain)
