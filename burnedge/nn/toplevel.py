"""torch's top-level tensor functions that model code calls (``torch.sigmoid(x)``, ``torch.zeros(2, 3)``...),
as burnedge.nn functions over traced tensors; constant makers give traced constants."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _math
from ._shape import sizes
from ._state import current

__all__ = [
    "abs",
    "arange",
    "clamp",
    "exp",
    "full",
    "full_like",
    "log",
    "mean",
    "ones",
    "ones_like",
    "relu",
    "sigmoid",
    "softmax",
    "sqrt",
    "sum",
    "tanh",
    "zeros",
    "zeros_like",
]

_FLOAT = np.dtype(np.float32)


def _tensor(x: Any) -> Any:
    return current().lift(x)


def sigmoid(input: Any) -> Any:
    return _tensor(input).sigmoid()


def tanh(input: Any) -> Any:
    return _tensor(input).tanh()


def relu(input: Any) -> Any:
    return _tensor(input).relu()


def exp(input: Any) -> Any:
    return _tensor(input).exp()


def log(input: Any) -> Any:
    return _tensor(input).log()


def sqrt(input: Any) -> Any:
    return _tensor(input).sqrt()


def abs(input: Any) -> Any:
    return _tensor(input).abs()


def clamp(input: Any, min: Any = None, max: Any = None) -> Any:
    return _math.clamp(input, min, max)


def softmax(input: Any, dim: int | None = None) -> Any:
    return _math.softmax("Softmax", input, dim)


def mean(input: Any, dim: Any = None, keepdim: bool = False) -> Any:
    return _math.reduce("ReduceMean", input, dim, keepdim)


def sum(input: Any, dim: Any = None, keepdim: bool = False) -> Any:
    return _math.reduce("ReduceSum", input, dim, keepdim)


def full(size: Any, fill_value: Any, dtype: Any = None, **ignored: Any) -> Any:
    """A constant of `size` (torch's dtype rule: float32 for a float fill, int64 for an int, bool for a bool)."""
    if dtype is None:
        dtype = bool if isinstance(fill_value, bool) else np.int64 if isinstance(fill_value, int) else _FLOAT
    shape = sizes(size if isinstance(size, tuple) else (size,))
    return current().const(np.full(shape, fill_value, dtype))


def zeros(*size: Any, dtype: Any = None, **ignored: Any) -> Any:
    return current().const(np.zeros(sizes(size), dtype or _FLOAT))


def ones(*size: Any, dtype: Any = None, **ignored: Any) -> Any:
    return current().const(np.ones(sizes(size), dtype or _FLOAT))


def zeros_like(input: Any, dtype: Any = None, **ignored: Any) -> Any:
    t = _tensor(input)
    return current().const(np.zeros(t.shape, dtype or t.dtype))


def ones_like(input: Any, dtype: Any = None, **ignored: Any) -> Any:
    t = _tensor(input)
    return current().const(np.ones(t.shape, dtype or t.dtype))


def full_like(input: Any, fill_value: Any, dtype: Any = None, **ignored: Any) -> Any:
    t = _tensor(input)
    return current().const(np.full(t.shape, fill_value, dtype or t.dtype))


def arange(start: Any, end: Any = None, step: Any = 1, dtype: Any = None, **ignored: Any) -> Any:
    """torch.arange: int64 for int bounds, else float32."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = np.int64 if all(isinstance(v, int) for v in (start, end, step)) else _FLOAT
    return current().const(np.arange(start, end, step).astype(dtype))
