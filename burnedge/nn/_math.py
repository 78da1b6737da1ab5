"""Traced arithmetic, comparisons, unary math, reductions, softmax, clamp, where and casts, with torch's rules.

Type promotion follows torch's in the cases model code meets: bool < integer < float; a Python scalar takes the
other operand's dtype when it is of the same kind or lower (``x_f32 * 2`` stays float32), a float scalar with an
integer tensor gives float32, and a float64 numpy array counts as float32 (numpy's default is not torch's).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ._state import current

__all__ = [
    "MinMax",
    "binary",
    "cast",
    "clamp",
    "common",
    "compare",
    "divide",
    "extreme",
    "floating",
    "floor_divide",
    "matmul",
    "reduce",
    "remainder",
    "softmax",
    "unary",
    "variance",
    "where",
]

MinMax = namedtuple("MinMax", ["values", "indices"])  # what torch's max(dim) / min(dim) return

_KIND = {"b": 0, "u": 1, "i": 1, "f": 2}
_DEFAULT = {0: np.dtype(bool), 1: np.dtype(np.int64), 2: np.dtype(np.float32)}
FLOAT = np.dtype(np.float32)


def _kind(tr, x) -> tuple[int, np.dtype | None]:
    """(kind, dtype) of an operand; dtype None for a Python or numpy scalar, which takes the others' type."""
    if tr.is_tensor(x):
        return _KIND.get(x.dtype.kind, 2), x.dtype
    if isinstance(x, (bool, np.bool_)):
        return 0, None
    if isinstance(x, (int, np.integer)):
        return 1, None
    if isinstance(x, (float, np.floating)):
        return 2, None
    arr = np.asarray(x)
    if arr.dtype.kind not in _KIND:
        raise tr.error(f"cannot use a {type(x).__name__} of dtype {arr.dtype} in a traced expression")
    dtype = FLOAT if arr.dtype == np.float64 else arr.dtype
    return _KIND[dtype.kind], dtype


def common(*xs: Any, at_least: int = 0) -> list:
    """The operands as traced tensors of one dtype (see the module docstring); `at_least` 2 makes them float."""
    tr = current()
    kinds = [_kind(tr, x) for x in xs]
    top = max([k for k, _ in kinds] + [at_least])
    strong = [d for k, d in kinds if k == top and d is not None]
    dtype = np.result_type(*strong) if strong else _DEFAULT[top]
    return [tr.lift(x, dtype) for x in xs]


def binary(op: str, a: Any, b: Any) -> Any:
    """An elementwise ONNX op of two operands (Add, Sub, Mul, Pow, Max ...), broadcasting as numpy does."""
    ta, tb = common(a, b)
    return current().op(op, ta, tb)


def divide(a: Any, b: Any) -> Any:
    """True division (torch's `/`): integer operands divide as float32."""
    ta, tb = common(a, b, at_least=2)
    return current().op("Div", ta, tb)


def floor_divide(a: Any, b: Any) -> Any:
    """torch's `//`: floor(a / b), computed in float32 for integers (exact below 2**24) and cast back."""
    tr = current()
    ta, tb = common(a, b)
    q = tr.op("Floor", tr.op("Div", *common(ta, tb, at_least=2)))
    return cast(q, ta.dtype)


def remainder(a: Any, b: Any) -> Any:
    """torch's `%` (Python's sign rule, the divisor's sign): a - floor(a / b) * b."""
    ta, tb = common(a, b)
    tr = current()
    if ta.dtype.kind in "iu":
        return tr.op("Mod", ta, tb, fmod=0)
    return tr.op("Sub", ta, tr.op("Mul", floor_divide(ta, tb), tb))


def compare(op: str, a: Any, b: Any) -> Any:
    """A comparison (Equal, Less, Greater, LessOrEqual, GreaterOrEqual; "NotEqual" as Not(Equal)); bool result."""
    tr = current()
    ta, tb = common(a, b)
    if op == "NotEqual":
        return tr.op("Not", tr.op("Equal", ta, tb))
    return tr.op(op, ta, tb)


def unary(op: str, x: Any, floating: bool = True, **attrs: Any) -> Any:
    """An elementwise op of one tensor; `floating` ops (Sqrt, Exp ...) compute integer input as float32."""
    tr = current()
    t = tr.lift(x)
    if floating and t.dtype.kind != "f":
        t = cast(t, FLOAT)
    return tr.op(op, t, **attrs)


def floating(x: Any) -> Any:
    """`x` traced, as float32 unless it already is a float (what math ops on integer input compute in)."""
    t = current().lift(x)
    return t if t.dtype.kind == "f" else cast(t, FLOAT)


def cast(x: Any, dtype: Any) -> Any:
    """`x` as `dtype` (a numpy dtype or its name); the same tensor when it already is."""
    tr = current()
    t = tr.lift(x)
    dtype = np.dtype(dtype)
    return t if t.dtype == dtype else tr.op("Cast", t, to=dtypes.to_onnx(dtype))


def _axes(tr, t, dim: int | Sequence[int] | None) -> list[int]:
    if dim is None:
        return list(range(t.ndim))
    dims = [dim] if isinstance(dim, (int, np.integer)) else list(dim)
    return sorted(tr.axis(d, t.ndim) for d in dims)


def reduce(op: str, x: Any, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Any:
    """ReduceSum / ReduceMean / ReduceMax / ReduceMin over `dim` (torch's: None is every dim)."""
    tr = current()
    t = tr.lift(x)
    if op == "ReduceMean" and t.dtype.kind != "f":
        t = cast(t, FLOAT)
    if t.ndim == 0:
        return t
    axes = _axes(tr, t, dim)
    return tr.op(op, t, tr.ints(axes), keepdims=int(bool(keepdim)))


def variance(x: Any, dim: Any = None, correction: int = 1, keepdim: bool = False) -> Any:
    """torch.var: mean squared deviation over `dim`, divided by (count - correction) (1: unbiased)."""
    tr = current()
    t = floating(x)
    axes = _axes(tr, t, dim)
    count = int(np.prod([t.shape[a] for a in axes], dtype=np.int64))
    dev = binary("Sub", t, reduce("ReduceMean", t, axes, True))
    total = reduce("ReduceSum", binary("Mul", dev, dev), axes, keepdim)
    return binary("Mul", total, 1.0 / max(count - correction, 0) if count > correction else float("nan"))


def extreme(which: str, x: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """torch's max / min: of everything (dim None), along `dim` as (values, indices), or elementwise with a
    tensor given in place of `dim`."""
    tr = current()
    if dim is not None and not isinstance(dim, (int, np.integer)):
        return binary("Max" if which == "max" else "Min", x, dim)
    t = tr.lift(x)
    op = "ReduceMax" if which == "max" else "ReduceMin"
    if dim is None:
        return reduce(op, t)
    axis = tr.axis(dim, t.ndim)
    values = reduce(op, t, axis, keepdim)
    arg = "ArgMax" if which == "max" else "ArgMin"
    indices = tr.op(arg, t, axis=axis, keepdims=int(bool(keepdim)))
    return MinMax(values, indices)


def softmax(op: str, x: Any, dim: int | None = None) -> Any:
    """Softmax / LogSoftmax along `dim`; None picks torch's legacy dim (0 for rank 0, 1 or 3, else 1)."""
    tr = current()
    t = tr.lift(x)
    if t.dtype.kind != "f":
        t = cast(t, FLOAT)
    if dim is None:
        dim = 0 if t.ndim in (0, 1, 3) else 1
    return tr.op(op, t, axis=tr.axis(dim, max(t.ndim, 1)))


def clamp(x: Any, min: Any = None, max: Any = None) -> Any:
    """torch.clamp: Clip with scalar bounds; elementwise Max / Min with tensor bounds."""
    tr = current()
    t = tr.lift(x)
    if min is None and max is None:
        raise tr.error("clamp needs min or max (both are None)")
    if tr.is_tensor(min) or tr.is_tensor(max) or np.ndim(min) or np.ndim(max):
        if min is not None:
            t = binary("Max", t, min)
        return t if max is None else binary("Min", t, max)
    if (isinstance(min, float) or isinstance(max, float)) and t.dtype.kind != "f":
        t = cast(t, FLOAT)
    lo = None if min is None else tr.lift(min, t.dtype)
    hi = None if max is None else tr.lift(max, t.dtype)
    return tr.op("Clip", t, lo, hi)


def where(condition: Any, input: Any, other: Any) -> Any:
    """torch.where(condition, input, other): `input` where the condition holds, else `other` (broadcast)."""
    tr = current()
    c = cast(condition, bool)
    a, b = common(input, other)
    return tr.op("Where", c, a, b)


def matmul(input: Any, other: Any) -> Any:
    """torch.matmul (numpy's matmul rules: batched, 1-D operands as vectors)."""
    return binary("MatMul", input, other)
