"""Activation ops: LeakyRelu, PRelu, Elu, Selu, Celu, Clip, HardSigmoid, HardSwish, Gelu, Softplus, Mish, ...

Spec: https://onnx.ai/onnx/operators/. Versions: LeakyRelu 1 (consumed_inputs), 6..16; PRelu 1 and 6 (per-channel
slope), 7..16 (unidirectional broadcast); Elu, Selu, HardSigmoid 1 (consumed_inputs), 6..22; Celu 12; Clip 1
(optional min/max attributes), 6 (min/max attributes with +-FLT_MAX defaults), 11..13 (min/max inputs, integer
types); HardSwish 14..22; Gelu 20 (approximate none/tanh); Softplus 1..22; Mish 18..22; ThresholdedRelu 10..22;
Shrink 9; Swish 24; Softmax, LogSoftmax, Hardmax 1 and 11 (input coerced to 2D at `axis`, default 1) and 13 (one
axis, default -1). Results keep the input dtype; float16 and bfloat16 are computed in float32 and rounded back.
"""

from __future__ import annotations

import math

import numpy as np

from . import register
from ._common import erf, norm_axis, same_dtype, sum_work

FLT_MAX = 3.4028234663852886e38
ELEMENTWISE = ("elementwise",)  # out[i] depends on in[i] only: may run in place
FUSED_LUT = ("elementwise", "fusable", "int8_lut")  # also fuses into C loops and runs in int8 as a table
LUT = ("elementwise", "int8_lut")  # no C expression: not fused
FUSED = ("elementwise", "fusable")  # PRelu: its slope is a tensor, so no int8 table


def _work(x: np.ndarray) -> np.ndarray:
    """`x` in a dtype good for float math: float16, bfloat16 and other small floats go to float32."""
    if x.dtype.kind == "V" or (x.dtype.kind == "f" and x.dtype.itemsize < 4):
        return x.astype(np.float32)
    if x.dtype.kind in "iub":
        return x.astype(np.float64)
    return x


def _sigmoid(x: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(x.dtype.type(0), x)


def _leaky_relu(x, alpha):
    return np.where(x >= 0, x, x * alpha)


def _elu(x, alpha):
    return np.where(x >= 0, x, alpha * np.expm1(np.minimum(x, 0)))


def _selu(x, alpha, gamma):
    return gamma * np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def _hard_sigmoid(x, alpha, beta):
    return np.clip(alpha * x + beta, 0, 1)


@register("LeakyRelu", 1, 5, tags=FUSED_LUT)
def leaky_relu_v1(x, *, alpha=0.01, consumed_inputs=None):
    """ONNX LeakyRelu opset 1."""
    return same_dtype(_leaky_relu(_work(x), alpha), x)


@register("LeakyRelu", 6, tags=FUSED_LUT)
def leaky_relu(x, *, alpha=0.01):
    """ONNX LeakyRelu opset 6..16."""
    return same_dtype(_leaky_relu(_work(x), alpha), x)


@register("Elu", 1, 5, tags=FUSED_LUT)
def elu_v1(x, *, alpha=1.0, consumed_inputs=None):
    """ONNX Elu opset 1."""
    return same_dtype(_elu(_work(x), alpha), x)


@register("Elu", 6, tags=FUSED_LUT)
def elu(x, *, alpha=1.0):
    """ONNX Elu opset 6..22."""
    return same_dtype(_elu(_work(x), alpha), x)


@register("Selu", 1, 5, tags=FUSED_LUT)
def selu_v1(x, *, alpha=1.6732000112533569, gamma=1.0506999492645264, consumed_inputs=None):
    """ONNX Selu opset 1 (its own defaults)."""
    return same_dtype(_selu(_work(x), alpha, gamma), x)


@register("Selu", 6, tags=FUSED_LUT)
def selu(x, *, alpha=1.67326319217681884765625, gamma=1.05070102214813232421875):
    """ONNX Selu opset 6..22."""
    return same_dtype(_selu(_work(x), alpha, gamma), x)


@register("HardSigmoid", 1, 5, tags=FUSED_LUT)
def hard_sigmoid_v1(x, *, alpha=0.2, beta=0.5, consumed_inputs=None):
    """ONNX HardSigmoid opset 1."""
    return same_dtype(_hard_sigmoid(_work(x), alpha, beta), x)


@register("HardSigmoid", 6, tags=FUSED_LUT)
def hard_sigmoid(x, *, alpha=0.2, beta=0.5):
    """ONNX HardSigmoid opset 6..22."""
    return same_dtype(_hard_sigmoid(_work(x), alpha, beta), x)


@register("Celu", 12, tags=LUT)
def celu(x, *, alpha=1.0):
    """ONNX Celu opset 12."""
    w = _work(x)
    return same_dtype(np.maximum(w, 0) + np.minimum(0, alpha * np.expm1(np.minimum(w, 0) / alpha)), x)


@register("HardSwish", 14, tags=FUSED_LUT)
def hard_swish(x):
    """ONNX HardSwish opset 14..22."""
    w = _work(x)
    return same_dtype(w * np.clip(w / 6 + 0.5, 0, 1), x)


@register("Softplus", 1, tags=FUSED_LUT)
def softplus(x):
    """ONNX Softplus opset 1..22."""
    return same_dtype(_softplus(_work(x)), x)


@register("Mish", 18, tags=LUT)
def mish(x):
    """ONNX Mish opset 18..22."""
    w = _work(x)
    return same_dtype(w * np.tanh(_softplus(w)), x)


@register("ThresholdedRelu", 10, tags=LUT)
def thresholded_relu(x, *, alpha=1.0):
    """ONNX ThresholdedRelu opset 10..22."""
    w = _work(x)
    return same_dtype(np.where(w > alpha, w, 0), x)


@register("Swish", 24, tags=LUT)
def swish(x, *, alpha=1.0):
    """ONNX Swish opset 24: x * sigmoid(alpha * x)."""
    w = _work(x)
    return same_dtype(w * _sigmoid(alpha * w), x)


@register("Gelu", 20, tags=FUSED_LUT)
def gelu(x, *, approximate="none"):
    """ONNX Gelu opset 20: exact (erf) or tanh approximation."""
    w = _work(x)
    if approximate == "tanh":
        c = math.sqrt(2 / math.pi)
        y = 0.5 * w * (1 + np.tanh(c * (w + 0.044715 * w * w * w)))
    elif approximate == "none":
        y = 0.5 * w * (1 + erf(w / math.sqrt(2)))
    else:
        raise ValueError(f"approximate must be 'none' or 'tanh', not {approximate!r}")
    return same_dtype(y, x)


@register("Shrink", 9, tags=ELEMENTWISE)
def shrink(x, *, bias=0.0, lambd=0.5):
    """ONNX Shrink opset 9 (float and integer types)."""
    w = _work(x)
    y = np.where(w < -lambd, w + bias, np.where(w > lambd, w - bias, 0))
    return same_dtype(y, x)


# -- PRelu --------------------------------------------------------------------------------------------------------
def _prelu(x, slope):
    w, s = _work(x), slope.astype(_work(x).dtype, copy=False)
    return same_dtype(np.where(w < 0, w * s, w), x)


def _channel_slope(x, slope):
    if slope.ndim == 1 and slope.size == x.shape[1] and slope.size > 1 and x.ndim > 2:
        return slope.reshape((-1,) + (1,) * (x.ndim - 2))
    return slope


@register("PRelu", 1, 5, tags=FUSED)
def prelu_v1(x, slope, *, consumed_inputs=None):
    """ONNX PRelu opset 1: slope of size 1 or one per channel."""
    return _prelu(x, _channel_slope(x, slope))


@register("PRelu", 6, tags=FUSED)
def prelu_v6(x, slope):
    """ONNX PRelu opset 6: slope of size 1 or one per channel."""
    return _prelu(x, _channel_slope(x, slope))


@register("PRelu", 7, tags=FUSED)
def prelu(x, slope):
    """ONNX PRelu opset 7..16: slope broadcasts to x (numpy rules)."""
    return _prelu(x, slope)


# -- Clip ---------------------------------------------------------------------------------------------------------
def _clip(x, lo, hi):
    """max(min(x, hi), lo) with NaN kept; when lo > hi every value becomes hi, as ONNX says."""
    y = x
    with np.errstate(all="ignore"):
        if lo is not None:
            y = np.maximum(y, np.asarray(lo).reshape(()).astype(x.dtype))
        if hi is not None:
            y = np.minimum(y, np.asarray(hi).reshape(()).astype(x.dtype))
    return same_dtype(y, x) if y is not x else x.copy()


def _attr_bound(x, v):
    """An attribute bound (a Python float); one beyond an integer dtype's range does nothing."""
    if v is None:
        return None
    if x.dtype.kind in "iu":
        info = np.iinfo(x.dtype)
        return np.array(v) if info.min <= v <= info.max else None
    if x.dtype.kind == "f" and abs(v) > np.finfo(x.dtype).max:
        return None
    return np.array(v)


@register("Clip", 1, 5, tags=FUSED_LUT)
def clip_v1(x, *, min=None, max=None, consumed_inputs=None):  # noqa: A002
    """ONNX Clip opset 1: optional min/max attributes."""
    return _clip(x, _attr_bound(x, min), _attr_bound(x, max))


@register("Clip", 6, tags=FUSED_LUT)
def clip_v6(x, *, min=-FLT_MAX, max=FLT_MAX):  # noqa: A002
    """ONNX Clip opset 6: min/max attributes."""
    return _clip(x, _attr_bound(x, min), _attr_bound(x, max))


@register("Clip", 11, tags=FUSED_LUT)
def clip(x, min=None, max=None):  # noqa: A002
    """ONNX Clip opset 11..13: optional min/max scalar inputs (integer types from 12)."""
    return _clip(x, min, max)


# -- Softmax family -----------------------------------------------------------------------------------------------
def _softmax(w, axis):
    w = sum_work(w)  # float64: the sum of exponentials is rounded once (SUM_DTYPE in _common)
    e = np.exp(w - np.max(w, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _log_softmax(w, axis):
    w = sum_work(w)
    s = w - np.max(w, axis=axis, keepdims=True)
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


def _hardmax(w, axis):
    idx = np.expand_dims(np.argmax(w, axis=axis), axis)
    y = np.zeros(w.shape, dtype=w.dtype)
    if w.size:
        np.put_along_axis(y, idx, 1, axis=axis)
    return y


def _coerced(fn, x, axis):
    """Opset < 13 form: x viewed as 2D [prod(shape[:axis]), prod(shape[axis:])], reduced along dim 1."""
    w = _work(x)
    a = norm_axis(axis, x.ndim) if x.ndim else 0
    if x.size == 0:
        return x.copy()
    rows = int(np.prod(x.shape[:a], dtype=np.int64))
    return same_dtype(fn(w.reshape(rows, -1), 1).reshape(x.shape), x)


def _one_axis(fn, x, axis):
    w = _work(x)
    if x.size == 0:
        norm_axis(axis, x.ndim)
        return x.copy()
    if x.ndim == 0:
        return same_dtype(fn(w.reshape(1), 0).reshape(()), x)
    return same_dtype(fn(w, norm_axis(axis, x.ndim)), x)


def _softmax_like(name: str, fn) -> None:
    def v1(x, *, axis=1):
        return _coerced(fn, x, axis)

    def v13(x, *, axis=-1):
        return _one_axis(fn, x, axis)

    v1.__name__ = f"{name.lower()}_v1"
    v13.__name__ = name.lower()
    v1.__doc__ = f"ONNX {name} opset 1 and 11: the input coerced to 2D at `axis`."
    v13.__doc__ = f"ONNX {name} opset 13: along one axis."
    register(name, 1)(v1)
    register(name, 13)(v13)


_softmax_like("Softmax", _softmax)
_softmax_like("LogSoftmax", _log_softmax)
_softmax_like("Hardmax", _hardmax)
