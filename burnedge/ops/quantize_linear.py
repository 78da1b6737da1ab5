"""Linear quantization: QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear.

Spec: https://onnx.ai/onnx/operators/ (QuantizeLinear / DequantizeLinear opsets 10, 13 (axis), 19 (saturate,
float8), 21 (block_size, output_dtype; int4/uint4), 23 (precision; float4e2m1; 24-25 add float8e8m0 scales and
int2/uint2 with the same signature); DynamicQuantizeLinear opset 11). Per-tensor, per-axis and blocked
granularities. Division rounds half to even; integer results saturate to the target range; float8 results
saturate to the largest finite value unless ``saturate=0`` (then they overflow to inf or NaN as ONNX specifies).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ..dtypes import from_onnx, is_float
from . import Spec, register
from ._common import norm_axis

_FLOAT8 = {
    np.dtype(ml_dtypes.float8_e4m3fn),
    np.dtype(ml_dtypes.float8_e4m3fnuz),
    np.dtype(ml_dtypes.float8_e5m2),
    np.dtype(ml_dtypes.float8_e5m2fnuz),
}


def _int_range(dt: np.dtype) -> tuple[int, int]:
    info = ml_dtypes.iinfo(dt) if dt.kind == "V" else np.iinfo(dt)
    return int(info.min), int(info.max)


def _expand(p: np.ndarray, x_shape: tuple[int, ...], axis: int, block_size: int) -> np.ndarray:
    """Scale or zero point `p` broadcastable to `x_shape` (per-tensor, per-axis or blocked)."""
    rank = len(x_shape)
    if p.ndim == 0 or (p.size == 1 and block_size <= 0):
        return p.reshape(())
    ax = norm_axis(axis, rank)
    if block_size > 0 or (p.ndim == rank and rank > 1):
        if p.ndim != rank:
            raise ValueError(f"blocked quantization needs a scale of rank {rank}, got shape {list(p.shape)}")
        bs = block_size if block_size > 0 else -(-x_shape[ax] // p.shape[ax])
        return np.take(np.repeat(p, bs, axis=ax), np.arange(x_shape[ax]), axis=ax)
    if p.ndim != 1 or p.shape[0] != x_shape[ax]:
        raise ValueError(f"per-axis scale of shape {list(p.shape)} does not match axis {axis} of {list(x_shape)}")
    shape = [1] * rank
    shape[ax] = p.shape[0]
    return p.reshape(shape)


def _quantize(x, scale, zp, axis, block_size, saturate, out_dtype, precision):
    if zp is not None:
        out = np.dtype(zp.dtype)
        if out_dtype and from_onnx(out_dtype) != out:
            raise ValueError(f"output_dtype {from_onnx(out_dtype)} differs from the zero point's type {out}")
    else:
        out = from_onnx(out_dtype) if out_dtype else np.dtype(np.uint8)
    prec = from_onnx(precision) if precision else np.dtype(scale.dtype)
    if not is_float(prec) or prec.itemsize < 2 or prec in _FLOAT8:
        prec = np.dtype(np.float32)
    s = _expand(np.asarray(scale), x.shape, axis, block_size).astype(prec)
    q = x.astype(prec) / s
    if is_float(out):
        if zp is not None:
            q = q.astype(np.float32) + _expand(zp, x.shape, axis, block_size).astype(np.float32)
        q = q.astype(np.float32)
        if saturate and (out in _FLOAT8 or "float4" in out.name):
            m = np.float32(float(ml_dtypes.finfo(out).max))
            q = np.where(np.isnan(q), q, np.clip(q, -m, m))
        return q.astype(out)
    q = np.rint(q.astype(np.float64))
    if zp is not None:
        q = q + _expand(zp, x.shape, axis, block_size).astype(np.float64)
    lo, hi = _int_range(out)
    return np.clip(q, lo, hi).astype(out)


def _q_infer(x, scale, zp=None, *, output_dtype=0, **_):
    if zp is not None:
        dt = zp.dtype
    else:
        dt = from_onnx(output_dtype) if output_dtype else np.dtype(np.uint8)
    return [Spec(tuple(x.shape), np.dtype(dt))]


@register("QuantizeLinear", since=10, infer=_q_infer)
def quantize_linear_10(x, y_scale, y_zero_point=None):
    return _quantize(x, y_scale, y_zero_point, 1, 0, 1, 0, 0)


@register("QuantizeLinear", since=13, infer=_q_infer)
def quantize_linear_13(x, y_scale, y_zero_point=None, *, axis=1):
    return _quantize(x, y_scale, y_zero_point, axis, 0, 1, 0, 0)


@register("QuantizeLinear", since=19, infer=_q_infer)
def quantize_linear_19(x, y_scale, y_zero_point=None, *, axis=1, saturate=1):
    return _quantize(x, y_scale, y_zero_point, axis, 0, saturate, 0, 0)


@register("QuantizeLinear", since=21, infer=_q_infer)
def quantize_linear_21(x, y_scale, y_zero_point=None, *, axis=1, block_size=0, output_dtype=0, saturate=1):
    return _quantize(x, y_scale, y_zero_point, axis, block_size, saturate, output_dtype, 0)


@register("QuantizeLinear", since=23, infer=_q_infer)
def quantize_linear_23(x, y_scale, y_zero_point=None, *, axis=1, block_size=0, output_dtype=0, precision=0, saturate=1):
    return _quantize(x, y_scale, y_zero_point, axis, block_size, saturate, output_dtype, precision)


def _dequantize(x, scale, zp, axis, block_size, output_dtype):
    out = from_onnx(output_dtype) if output_dtype else np.dtype(scale.dtype)
    if out in _FLOAT8 or not is_float(out):
        out = np.dtype(np.float32)
    if is_float(np.dtype(x.dtype)):
        v = x.astype(np.float32)
        if zp is not None:
            v = v - _expand(zp, x.shape, axis, block_size).astype(np.float32)
    else:
        v = x.astype(np.int64)
        if zp is not None:
            v = v - _expand(zp, x.shape, axis, block_size).astype(np.int64)
    s = _expand(np.asarray(scale), x.shape, axis, block_size).astype(np.float32)
    return (v.astype(np.float32) * s).astype(out)


def _dq_infer(x, scale, zp=None, *, output_dtype=0, **_):
    out = from_onnx(output_dtype) if output_dtype else np.dtype(scale.dtype)
    if out in _FLOAT8 or not is_float(out):
        out = np.dtype(np.float32)
    return [Spec(tuple(x.shape), out)]


@register("DequantizeLinear", since=10, infer=_dq_infer)
def dequantize_linear_10(x, x_scale, x_zero_point=None):
    return _dequantize(x, x_scale, x_zero_point, 1, 0, 0)


@register("DequantizeLinear", since=13, infer=_dq_infer)
def dequantize_linear_13(x, x_scale, x_zero_point=None, *, axis=1):
    return _dequantize(x, x_scale, x_zero_point, axis, 0, 0)


@register("DequantizeLinear", since=21, infer=_dq_infer)
def dequantize_linear_21(x, x_scale, x_zero_point=None, *, axis=1, block_size=0):
    return _dequantize(x, x_scale, x_zero_point, axis, block_size, 0)


@register("DequantizeLinear", since=23, infer=_dq_infer)
def dequantize_linear_23(x, x_scale, x_zero_point=None, *, axis=1, block_size=0, output_dtype=0):
    return _dequantize(x, x_scale, x_zero_point, axis, block_size, output_dtype)


@register("DynamicQuantizeLinear", since=11)
def dynamic_quantize_linear(x):
    """uint8 asymmetric quantization over the range of `x` widened to include 0; returns (y, scale, zero point)."""
    xf = x.astype(np.float32)
    lo = np.float32(min(0.0, float(xf.min()))) if xf.size else np.float32(0)
    hi = np.float32(max(0.0, float(xf.max()))) if xf.size else np.float32(0)
    scale = np.float32((hi - lo) / np.float32(255))
    if scale == 0:
        return np.zeros(x.shape, np.uint8), np.array(scale, np.float32), np.array(0, np.uint8)
    zp = np.clip(np.rint(np.float32(0) - lo / scale), 0, 255).astype(np.uint8)
    y = np.clip(np.rint(xf / scale) + np.float32(zp), 0, 255).astype(np.uint8)
    return y, np.array(scale, np.float32), np.array(zp, np.uint8)
