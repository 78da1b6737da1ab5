"""Tensor: a traced value with a static shape, and Parameter / Buffer: the numpy-backed weights of a Module.

A traced Tensor stands for one value of the graph being traced; every operation on it adds ONNX nodes (through
the active Tracer) and returns a new Tensor. A Parameter or Buffer holds a numpy array; used inside `forward` it
becomes an initializer named by its PyTorch name (``features.0.weight``). Anything that would read a tensor's
values (``bool(t)``, ``if t:``, ``float(t)``, ``t.item()``) is a TraceError: a traced graph cannot branch on data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _index, _math, _shape
from ._state import current

__all__ = ["Buffer", "Parameter", "Stored", "Tensor"]


class Tensor:
    """A traced tensor: `name` in the graph, static `shape` (a tuple), numpy `dtype`; `const` holds the value when
    it is known while tracing (a weight, a constant)."""

    __array_ufunc__ = None  # numpy hands `array + tensor` to Tensor.__radd__
    __hash__ = object.__hash__  # `==` builds a comparison node, so hashing stays by identity (as in torch)

    def __init__(self, tracer: Any, name: str, shape: tuple[int, ...], dtype: np.dtype, const: Any = None):
        self._tracer, self.name, self._shape, self._dtype, self.const = tracer, name, tuple(shape), dtype, const

    # -- facts -----------------------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def dim(self) -> int:
        return self.ndim

    def size(self, dim: int | None = None) -> Any:
        """The shape, or the size of one dim (torch's `size()`)."""
        return self.shape if dim is None else self.shape[dim]

    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self) -> int:
        if not self.shape:
            raise current().error("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        return iter([self[i] for i in range(len(self))])

    def __repr__(self) -> str:
        return f"Tensor({self.name!r}, shape={list(self.shape)}, dtype={self.dtype})"

    # -- what tracing cannot do ------------------------------------------------------------------------------
    def _no_values(self, what: str) -> Any:
        raise current().error(
            f"{what} reads the values of traced tensor {self.name!r} {list(self.shape)}: tracing cannot branch on "
            "values (the graph is static); compute both sides and pick with burnedge.nn.functional.where"
        )

    def __bool__(self) -> bool:
        return self._no_values("bool(tensor) / `if tensor:`")

    def __int__(self) -> int:
        return self._no_values("int(tensor)")

    def __float__(self) -> float:
        return self._no_values("float(tensor)")

    def __index__(self) -> int:
        return self._no_values("using a tensor as a Python index")

    def item(self) -> Any:
        return self._no_values("item()")

    def tolist(self) -> Any:
        return self._no_values("tolist()")

    def numpy(self) -> Any:
        return self._no_values("numpy()")

    def __setitem__(self, key: Any, value: Any) -> None:
        raise current().error(
            "in-place assignment (tensor[...] = ...) is not traced: build a new tensor (cat, where, pad)"
        )

    # -- arithmetic ------------------------------------------------------------------------------------------
    def __add__(self, o):
        return _math.binary("Add", self, o)

    def __radd__(self, o):
        return _math.binary("Add", o, self)

    def __sub__(self, o):
        return _math.binary("Sub", self, o)

    def __rsub__(self, o):
        return _math.binary("Sub", o, self)

    def __mul__(self, o):
        return _math.binary("Mul", self, o)

    def __rmul__(self, o):
        return _math.binary("Mul", o, self)

    def __truediv__(self, o):
        return _math.divide(self, o)

    def __rtruediv__(self, o):
        return _math.divide(o, self)

    def __floordiv__(self, o):
        return _math.floor_divide(self, o)

    def __rfloordiv__(self, o):
        return _math.floor_divide(o, self)

    def __mod__(self, o):
        return _math.remainder(self, o)

    def __rmod__(self, o):
        return _math.remainder(o, self)

    def __pow__(self, o):
        return _math.binary("Pow", self, o)

    def __rpow__(self, o):
        return _math.binary("Pow", o, self)

    def __matmul__(self, o):
        return _math.binary("MatMul", self, o)

    def __rmatmul__(self, o):
        return _math.binary("MatMul", o, self)

    def __neg__(self):
        return _math.unary("Neg", self, floating=False)

    def __pos__(self):
        return self

    def __abs__(self):
        return _math.unary("Abs", self, floating=False)

    def __invert__(self):
        return _math.unary("Not", _math.cast(self, bool), floating=False)

    def __and__(self, o):
        return _math.binary("And", _math.cast(self, bool), _math.cast(o, bool))

    def __or__(self, o):
        return _math.binary("Or", _math.cast(self, bool), _math.cast(o, bool))

    def __eq__(self, o):  # type: ignore[override]
        return _math.compare("Equal", self, o)

    def __ne__(self, o):  # type: ignore[override]
        return _math.compare("NotEqual", self, o)

    def __lt__(self, o):
        return _math.compare("Less", self, o)

    def __le__(self, o):
        return _math.compare("LessOrEqual", self, o)

    def __gt__(self, o):
        return _math.compare("Greater", self, o)

    def __ge__(self, o):
        return _math.compare("GreaterOrEqual", self, o)

    add, sub, mul, div, pow, matmul = __add__, __sub__, __mul__, __truediv__, __pow__, __matmul__

    # -- math ------------------------------------------------------------------------------------------------
    def sqrt(self):
        return _math.unary("Sqrt", self)

    def rsqrt(self):
        return _math.divide(1.0, self.sqrt())

    def exp(self):
        return _math.unary("Exp", self)

    def log(self):
        return _math.unary("Log", self)

    def tanh(self):
        return _math.unary("Tanh", self)

    def sigmoid(self):
        return _math.unary("Sigmoid", self)

    def relu(self):
        return _math.unary("Relu", self, floating=False)

    def abs(self):
        return _math.unary("Abs", self, floating=False)

    def neg(self):
        return _math.unary("Neg", self, floating=False)

    def sin(self):
        return _math.unary("Sin", self)

    def cos(self):
        return _math.unary("Cos", self)

    def reciprocal(self):
        return _math.divide(1.0, self)

    def clamp(self, min=None, max=None):
        return _math.clamp(self, min, max)

    clip = clamp

    def mean(self, dim=None, keepdim=False):
        return _math.reduce("ReduceMean", self, dim, keepdim)

    def sum(self, dim=None, keepdim=False):
        return _math.reduce("ReduceSum", self, dim, keepdim)

    def var(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        return _math.variance(self, dim, int(unbiased) if correction is None else correction, keepdim)

    def std(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        return self.var(dim, unbiased, keepdim, correction=correction).sqrt()

    def max(self, dim=None, keepdim=False):
        return _math.extreme("max", self, dim, keepdim)

    def min(self, dim=None, keepdim=False):
        return _math.extreme("min", self, dim, keepdim)

    def argmax(self, dim=None, keepdim=False):
        t = _shape.flatten(self) if dim is None else self
        return current().op(
            "ArgMax",
            t,
            axis=0 if dim is None else current().axis(dim, t.ndim),
            keepdims=int(bool(keepdim) and dim is not None),
        )

    def softmax(self, dim=None):
        return _math.softmax("Softmax", self, dim)

    def log_softmax(self, dim=None):
        return _math.softmax("LogSoftmax", self, dim)

    def masked_fill(self, mask, value):
        return _math.where(mask, value, self)

    # -- types -----------------------------------------------------------------------------------------------
    def to(self, dtype):
        return _math.cast(self, dtype)

    type = to

    def float(self):
        return _math.cast(self, np.float32)

    def long(self):
        return _math.cast(self, np.int64)

    def int(self):
        return _math.cast(self, np.int32)

    def bool(self):
        return _math.cast(self, bool)

    def contiguous(self, *args, **kwargs):
        return self

    def detach(self):
        return self

    # -- shape -----------------------------------------------------------------------------------------------
    def reshape(self, *shape):
        return _shape.reshape(self, _shape.sizes(shape))

    view = reshape

    def view_as(self, other):
        return _shape.reshape(self, other.shape)

    reshape_as = view_as

    def flatten(self, start_dim=0, end_dim=-1):
        return _shape.flatten(self, start_dim, end_dim)

    def transpose(self, dim0, dim1):
        return _shape.transpose(self, dim0, dim1)

    def permute(self, *dims):
        return _shape.permute(self, _shape.sizes(dims))

    def t(self):
        return self if self.ndim < 2 else _shape.transpose(self, 0, 1)

    @property
    def T(self):
        return _shape.permute(self, list(range(self.ndim))[::-1])

    def squeeze(self, dim=None):
        return _shape.squeeze(self, dim)

    def unsqueeze(self, dim):
        return _shape.unsqueeze(self, dim)

    def expand(self, *sizes):
        return _shape.expand(self, _shape.sizes(sizes))

    def expand_as(self, other):
        return _shape.expand(self, other.shape)

    def repeat(self, *sizes):
        return _shape.repeat(self, _shape.sizes(sizes))

    def split(self, split_size, dim=0):
        return _shape.split(self, split_size, dim)

    def chunk(self, chunks, dim=0):
        return _shape.chunk(self, chunks, dim)

    def unbind(self, dim=0):
        return tuple(_shape.squeeze(p, dim) for p in _shape.split(self, 1, dim))

    def __getitem__(self, index):
        return _index.getitem(self, index)


class Stored(Tensor):
    """A tensor held as a numpy array by a Module (a Parameter or a Buffer); traced as an initializer."""

    def __init__(self, data: Any = None):
        arr = np.zeros((0,), np.float32) if data is None else np.array(data)
        self.data = arr.astype(np.float32) if arr.dtype == np.float64 else arr  # numpy's default -> torch's
        self.name, self.const, self._tracer = "", None, None

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.data.shape)

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    def numpy(self) -> np.ndarray:
        return self.data

    def __repr__(self) -> str:
        return f"{type(self).__name__}(shape={list(self.shape)}, dtype={self.dtype})"


class Parameter(Stored):
    """A learnable weight (torch.nn.Parameter's counterpart): `data` is its numpy array."""

    def __init__(self, data: Any = None, requires_grad: bool = True):
        super().__init__(data)
        self.requires_grad = requires_grad


class Buffer(Stored):
    """A non-learnable state array (running statistics...); `persistent` ones are part of the state dict."""

    def __init__(self, data: Any = None, persistent: bool = True):
        super().__init__(data)
        self.persistent = persistent
