"""Traced activations, softmax, dropout and embedding, with torch.nn.functional's names and signatures."""

from __future__ import annotations

from typing import Any

from ._math import cast, floating, unary
from ._math import softmax as _softmax
from ._state import current

__all__ = [
    "dropout",
    "elu",
    "embedding",
    "gelu",
    "hardsigmoid",
    "hardswish",
    "leaky_relu",
    "log_softmax",
    "relu",
    "relu6",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
    "tanh",
]


def relu(input: Any, inplace: bool = False) -> Any:
    return unary("Relu", input, floating=False)


def relu6(input: Any, inplace: bool = False) -> Any:
    tr = current()
    x = floating(input)
    return tr.op("Clip", x, tr.lift(0.0, x.dtype), tr.lift(6.0, x.dtype))


def leaky_relu(input: Any, negative_slope: float = 0.01, inplace: bool = False) -> Any:
    return current().op("LeakyRelu", floating(input), alpha=float(negative_slope))


def elu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Any:
    return current().op("Elu", floating(input), alpha=float(alpha))


def gelu(input: Any, approximate: str = "none") -> Any:
    """GELU: exact (erf) or approximate="tanh"."""
    tr = current()
    if approximate not in ("none", "tanh"):
        raise tr.error(f"gelu approximate must be 'none' or 'tanh', got {approximate!r}")
    return tr.op("Gelu", floating(input), approximate=approximate)


def silu(input: Any, inplace: bool = False) -> Any:
    """x * sigmoid(x)."""
    tr = current()
    x = floating(input)
    return tr.op("Mul", x, tr.op("Sigmoid", x))


def sigmoid(input: Any) -> Any:
    return unary("Sigmoid", input)


def tanh(input: Any) -> Any:
    return unary("Tanh", input)


def softplus(input: Any, beta: float = 1.0, threshold: float = 20.0) -> Any:
    """log(1 + exp(x)) (beta 1; torch's linear region above `threshold` is where the two agree in float32)."""
    tr = current()
    if beta != 1.0:
        x = floating(input)
        return tr.op("Div", tr.op("Softplus", tr.op("Mul", x, tr.lift(beta, x.dtype))), tr.lift(beta, x.dtype))
    return tr.op("Softplus", floating(input))


def hardswish(input: Any, inplace: bool = False) -> Any:
    """x * relu6(x + 3) / 6."""
    return current().op("HardSwish", floating(input))


def hardsigmoid(input: Any, inplace: bool = False) -> Any:
    """relu6(x + 3) / 6: ONNX HardSigmoid with torch's slope 1/6 (ONNX's default is 0.2)."""
    return current().op("HardSigmoid", floating(input), alpha=1.0 / 6.0, beta=0.5)


def softmax(input: Any, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Any:
    x = input if dtype is None else cast(input, dtype)
    return _softmax("Softmax", x, dim)


def log_softmax(input: Any, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Any:
    x = input if dtype is None else cast(input, dtype)
    return _softmax("LogSoftmax", x, dim)


def dropout(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Any:
    """The identity: a traced model is for inference, where dropout does nothing."""
    tr = current()
    if not 0.0 <= p <= 1.0:
        raise tr.error(f"dropout probability must be in [0, 1], got {p}")
    return tr.lift(input)


def embedding(
    input: Any,
    weight: Any,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Any:
    """Rows of `weight` picked by the integer `input` (a Gather on axis 0)."""
    tr = current()
    idx, w = tr.lift(input), tr.lift(weight)
    if idx.dtype.kind not in "iu":
        raise tr.error(f"embedding indices must be integers, got {idx.dtype}")
    if max_norm is not None:
        raise tr.error("embedding max_norm renormalises the weights while running; it is not supported")
    return tr.op("Gather", w, idx, axis=0)
