"""Elementwise ops: unary math, binary arithmetic with broadcasting, comparisons, logic and bitwise ops.

Spec: https://onnx.ai/onnx/operators/ (Add, Sub, ..., Erf, IsNaN, BitShift). float and integer dtypes as ONNX
allows; results keep the input dtype (comparisons give bool).
"""

from __future__ import annotations

import numpy as np

from . import register
from ._common import erf, same_dtype
from ._intmath import int_div, int_mod

# tags: "elementwise" (may run in place), "fusable" (joins generated loops), "int8_lut" (int8 as a table)
E, F, L = ("elementwise",), ("elementwise", "fusable"), ("elementwise", "fusable", "int8_lut")


def _unary(name: str, fn, tags: tuple[str, ...], since: int = 1) -> None:
    def op(x):
        return same_dtype(fn(x), x)

    op.__name__ = name.lower()
    register(name, since, tags=tags)(op)


for _name, (_fn, _tags) in {
    "Abs": (np.abs, L),
    "Neg": (np.negative, L),
    "Floor": (np.floor, F),
    "Ceil": (np.ceil, F),
    "Sqrt": (np.sqrt, L),
    "Exp": (np.exp, L),
    "Log": (np.log, L),
    "Reciprocal": (np.reciprocal, L),
    "Tanh": (np.tanh, L),
    "Sin": (np.sin, L),
    "Cos": (np.cos, L),
    "Tan": (np.tan, E),
    "Asin": (np.arcsin, E),
    "Acos": (np.arccos, E),
    "Atan": (np.arctan, E),
    "Sinh": (np.sinh, E),
    "Cosh": (np.cosh, E),
    "Asinh": (np.arcsinh, E),
    "Acosh": (np.arccosh, E),
    "Atanh": (np.arctanh, E),
    "Sign": (np.sign, F),
    "Round": (np.rint, F),
    "Erf": (erf, L),
    "Relu": (lambda x: np.maximum(x, 0), L),
    "Identity": (lambda x: x.copy(), ("view", "int8_passthrough", "qdq_movement")),
    "Softsign": (lambda x: x / (1 + np.abs(x)), L),
    "Sigmoid": (
        lambda x: np.where(x >= 0, 1 / (1 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x)))),
        L,
    ),
}.items():
    _unary(_name, _fn, _tags)


@register("Not", tags=("fusable",))
def not_(x):
    return np.logical_not(x)


@register("IsNaN", since=9, tags=("fusable",))
def is_nan(x):
    return np.isnan(x.astype(np.float32) if x.dtype.kind == "V" else x)


@register("IsInf", since=10)
def is_inf(x, *, detect_negative=1, detect_positive=1):
    x = x.astype(np.float32) if x.dtype.kind == "V" else x
    return (np.isneginf(x) & bool(detect_negative)) | (np.isposinf(x) & bool(detect_positive))


def _binary(name: str, fn, since: int = 7, tags: tuple[str, ...] = E) -> None:
    def op(a, b):
        return same_dtype(fn(a, b), a)

    def legacy(a, b, *, broadcast=0, axis=None, consumed_inputs=None):
        if broadcast and axis is not None and b.ndim < a.ndim:
            b = b.reshape(b.shape + (1,) * (a.ndim - axis - b.ndim))
        return same_dtype(fn(a, b), a)

    op.__name__ = legacy.__name__ = name.lower()
    register(name, 1, 6, tags=tags)(legacy)
    register(name, since, tags=tags)(op)


_binary("Add", np.add, tags=F)  # Add / Mul have their own int8 rules (QAdd, QMul; a table with a constant)
_binary("Sub", np.subtract, tags=L)
_binary("Mul", np.multiply, tags=F)
_binary("Div", lambda a, b: int_div(a, b) if a.dtype.kind in "iu" else a / b, tags=L)  # x / 0 == 0: see _intmath


@register("Pow", since=7, tags=("fusable", "int8_lut"))
def pow_(x, y):
    if x.dtype.kind in "iu" and y.dtype.kind in "iu":
        return np.power(x, y.astype(x.dtype))
    return np.power(x.astype(np.float64), y.astype(np.float64)).astype(x.dtype)


@register("Mod", since=10)
def mod(a, b, *, fmod=0):
    if a.dtype.kind not in "iu":
        return same_dtype(np.fmod(a, b) if fmod or a.dtype.kind == "f" else np.mod(a, b), a)
    return int_mod(a, b, bool(fmod))  # x % 0 == x, INT_MIN % -1 == 0: see _intmath


def _compare(name: str, fn, since: int = 1) -> None:
    def op(a, b):
        return fn(a, b)

    op.__name__ = name.lower()
    register(name, since, tags=("fusable",))(op)


for _name, _fn in {
    "Equal": np.equal,
    "Less": np.less,
    "Greater": np.greater,
    "LessOrEqual": np.less_equal,
    "GreaterOrEqual": np.greater_equal,
    "And": np.logical_and,
    "Or": np.logical_or,
    "Xor": np.logical_xor,
}.items():
    _compare(_name, _fn)

for _name, _fn in {"BitwiseAnd": np.bitwise_and, "BitwiseOr": np.bitwise_or, "BitwiseXor": np.bitwise_xor}.items():
    _binary(_name, _fn, since=18)


@register("BitwiseNot", since=18)
def bitwise_not(x):
    return np.invert(x)


@register("BitShift", since=11)
def bit_shift(x, y, *, direction):
    shifted = np.left_shift(x, y) if direction == "LEFT" else np.right_shift(x, y)
    return shifted.astype(x.dtype)


def _variadic(name: str, fn) -> None:
    def op(*xs):
        out = xs[0]
        for x in xs[1:]:
            out = fn(out, x)
        return same_dtype(out, xs[0]) if len(xs) > 1 else np.array(out, copy=True)

    op.__name__ = name.lower()
    register(name, since=8, tags=("fusable",))(op)


_variadic("Sum", np.add)
_variadic("Max", np.maximum)
_variadic("Min", np.minimum)


@register("Mean", since=8, tags=("fusable",))
def mean(*xs):
    out = xs[0].astype(np.float64)
    for x in xs[1:]:
        out = out + x
    return (out / len(xs)).astype(xs[0].dtype)


@register("Where", since=9, tags=("fusable",))
def where(cond, a, b):
    return np.where(cond, a, b)
