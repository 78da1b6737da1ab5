"""The int8 scheme: scales and zero points, fixed-point requantization multipliers, quantize and dequantize.

Written once and used by every backend (DESIGN.md, "int8"):

- activations: asymmetric int8 per tensor, range [-128, 127]; the range always contains 0, so 0.0 (padding,
  ReLU's floor) is represented exactly by the zero point;
- weights: symmetric int8 per output channel, zero point 0, narrow range [-127, 127];
- bias: int32 per output channel with scale ``s_in * s_w``, zero point 0;
- requantization: ``acc * (s_in * s_w / s_out)`` becomes a 32-bit fixed-point multiplier ``m`` and a ``shift``
  (``quantize_multiplier``), applied with exactly one rounding in 64-bit integer arithmetic (``requantize``); that
  rule lives in `burnedge.ops.fixedpoint` (re-exported here).

Every scale is a normal float32 (never 0, never subnormal: a flush-to-zero FPU would turn a subnormal scale into 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..ops.fixedpoint import (
    INT8_MAX,
    INT8_MIN,
    INT32_MAX,
    INT32_MIN,
    quantize_multiplier,
    requant_multiplier,
    requantize,
)
from ..ops.fixedpoint import along as _along

__all__ = [
    "INT8_MAX",
    "INT8_MIN",
    "MIN_SCALE",
    "QParams",
    "activation_qparams",
    "bias_qparams",
    "dequantize",
    "quantize",
    "quantize_bias",
    "quantize_multiplier",
    "requant_multiplier",
    "requantize",
    "weight_qparams",
]

_INT8 = np.dtype(np.int8)
MIN_SCALE = float(np.finfo(np.float32).tiny)  # the smallest normal float32


@dataclass(frozen=True, eq=False)
class QParams:
    """How one tensor is quantized: ``real = (q - zero_point) * scale``, q in [qmin, qmax].

    `scale` is a float32 array: 0-d per tensor, 1-d (one per channel) when `axis` names the channel axis.
    """

    scale: np.ndarray
    zero_point: int = 0
    dtype: np.dtype = field(default_factory=lambda: np.dtype(np.int8))
    axis: int | None = None
    qmin: int = INT8_MIN
    qmax: int = INT8_MAX

    def __post_init__(self) -> None:
        scale = np.array(self.scale, dtype=np.float32)
        scale.flags.writeable = False  # shared by every user of these parameters
        object.__setattr__(self, "scale", scale)
        object.__setattr__(self, "dtype", np.dtype(self.dtype))
        for name in ("zero_point", "qmin", "qmax"):  # numpy integers -> Python ints (JSON, hashing)
            object.__setattr__(self, name, int(getattr(self, name)))
        if self.axis is not None:
            object.__setattr__(self, "axis", int(self.axis))
        if scale.ndim > 1 or (scale.ndim == 1 and self.axis is None) or (scale.ndim == 0 and self.axis is not None):
            raise ValueError(
                f"scale of shape {list(scale.shape)} with axis={self.axis}: per tensor needs a scalar "
                "scale and no axis, per channel a 1-d scale and an axis"
            )
        if not (np.all(np.isfinite(scale)) and np.all(scale >= MIN_SCALE)):
            raise ValueError(f"scales must be finite normal positive float32 values, got {scale.tolist()}")
        info = np.iinfo(self.dtype)
        if not info.min <= self.qmin < self.qmax <= info.max:
            raise ValueError(f"[{self.qmin}, {self.qmax}] is not a range inside {self.dtype}")
        if not self.qmin <= self.zero_point <= self.qmax:
            raise ValueError(f"zero point {self.zero_point} lies outside [{self.qmin}, {self.qmax}]")

    @property
    def per_channel(self) -> bool:
        return self.axis is not None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form (float32 scales survive the float64 round trip exactly)."""
        scale = self.scale.tolist()
        return {
            "scale": scale,
            "zero_point": self.zero_point,
            "dtype": self.dtype.name,
            "axis": self.axis,
            "qmin": self.qmin,
            "qmax": self.qmax,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> QParams:
        return cls(
            np.asarray(d["scale"], np.float32),
            int(d["zero_point"]),
            np.dtype(d["dtype"]),
            d["axis"],
            int(d["qmin"]),
            int(d["qmax"]),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, QParams):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(repr(self.to_dict()))


def _scale(value: Any) -> np.ndarray:
    """float64 scales -> float32, floored at the smallest normal float32."""
    return np.maximum(np.asarray(value, np.float64).astype(np.float32), np.float32(MIN_SCALE))


def activation_qparams(lo: float, hi: float, qmin: int = INT8_MIN, qmax: int = INT8_MAX) -> QParams:
    """Asymmetric per-tensor parameters for values in [lo, hi].

    Steps: widen the range to contain 0; a range of width 0 (all zeros) gets scale 1 and zero point 0; else
    ``scale = float32((hi - lo) / (qmax - qmin))`` (at least MIN_SCALE) and
    ``zero_point = clamp(round_half_even(qmin - lo / scale), qmin, qmax)``, computed in float64.
    """
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        raise ValueError(f"cannot quantize the range [{lo}, {hi}]: it must be finite with lo <= hi")
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi == lo:
        return QParams(np.array(1.0, np.float32), 0, _INT8, None, qmin, qmax)
    scale = _scale((hi - lo) / (qmax - qmin))
    zp = int(np.clip(np.rint(qmin - lo / np.float64(scale)), qmin, qmax))
    return QParams(scale, zp, _INT8, None, qmin, qmax)


def weight_qparams(w: np.ndarray, axis: int = 0, min_scale: np.ndarray | float | None = None) -> QParams:
    """Symmetric per-output-channel parameters: zero point 0, range [-127, 127], ``scale_c = max|w_c| / 127``.

    A channel of zeros gets scale 1 (any scale represents it; 1 keeps its bias scale ``s_in * s_w`` sane).
    `min_scale` (a scalar or one value per channel) floors the scales: `accumulators.weight_floor` gives the floor
    that keeps the int32 bias and accumulators representable.
    """
    w = np.asarray(w)
    if w.ndim == 0:
        raise ValueError("weights need at least one axis (the output channels)")
    axis = axis % w.ndim
    wf = np.moveaxis(w.astype(np.float64), axis, 0).reshape(w.shape[axis], -1)
    if not np.all(np.isfinite(wf)):
        bad = np.flatnonzero(~np.all(np.isfinite(wf), axis=1))
        raise ValueError(f"weights are not finite in channel(s) {bad[:8].tolist()}")
    amax = np.abs(wf).max(axis=1) if wf.shape[1] else np.zeros(wf.shape[0])
    scale = np.where(amax > 0, amax / 127.0, 1.0)
    if min_scale is not None:
        scale = np.maximum(scale, np.broadcast_to(np.asarray(min_scale, np.float64), scale.shape))
    return QParams(_scale(scale), 0, _INT8, axis, -127, 127)


def bias_qparams(input_scale: float | np.ndarray, weight: QParams) -> QParams:
    """int32 bias parameters: ``scale = float32(s_in * s_w)`` per weight channel, zero point 0.

    The bias is a 1-d tensor (one value per output channel), so a per-channel bias has axis 0.
    """
    s_in = np.float64(np.float32(input_scale))
    scale = _scale(s_in * weight.scale.astype(np.float64))
    return QParams(scale, 0, np.dtype(np.int32), 0 if scale.ndim else None, INT32_MIN, INT32_MAX)


def quantize_bias(bias: np.ndarray, input_scale: float | np.ndarray, weight: QParams) -> tuple[np.ndarray, QParams]:
    """(int32 bias, its QParams): ``round_half_even(b / (s_in * s_w))``, saturated to int32.

    The bias is 1-d (one value per output channel), whatever the weight's channel axis.
    """
    qp = bias_qparams(input_scale, weight)
    b = np.asarray(bias, np.float64)
    q = np.rint(b / qp.scale.astype(np.float64))
    return np.clip(q, INT32_MIN, INT32_MAX).astype(np.int32), qp


def quantize(x: np.ndarray, qp: QParams) -> np.ndarray:
    """Float -> integer like ONNX QuantizeLinear: ``clamp(round_half_even(x / scale) + zero_point, qmin, qmax)``.

    The division is done in float32 (as QuantizeLinear does for a float32 scale); NaN maps to the zero point.
    """
    x = np.asarray(x)
    s = _along(qp.scale, x.ndim, qp.axis)
    with np.errstate(invalid="ignore", over="ignore"):
        q = np.rint(x.astype(np.float32) / s).astype(np.float64) + qp.zero_point
    q = np.where(np.isnan(q), qp.zero_point, q)
    return np.clip(q, qp.qmin, qp.qmax).astype(qp.dtype)


def dequantize(q: np.ndarray, qp: QParams) -> np.ndarray:
    """Integer -> float32 like ONNX DequantizeLinear: ``(q - zero_point) * scale``."""
    q = np.asarray(q)
    s = _along(qp.scale, q.ndim, qp.axis)
    return np.asarray((q.astype(np.int64) - qp.zero_point).astype(np.float32) * s, np.float32)
