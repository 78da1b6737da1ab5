"""The int8 scheme: scales and zero points, fixed-point requantization multipliers, quantize and dequantize.

Written once and used by every backend (DESIGN.md, "int8"):

- activations: asymmetric int8 per tensor, range [-128, 127]; the range always contains 0, so 0.0 (padding,
  ReLU's floor) is represented exactly by the zero point;
- weights: symmetric int8 per output channel, zero point 0, narrow range [-127, 127];
- bias: int32 per output channel with scale ``s_in * s_w``, zero point 0;
- requantization: ``acc * (s_in * s_w / s_out)`` becomes a 32-bit fixed-point multiplier ``m`` and a ``shift``
  (``quantize_multiplier``), applied with exactly one rounding in 64-bit integer arithmetic (``requantize``).

Every scale is a normal float32 (never 0, never subnormal: a flush-to-zero FPU would turn a subnormal scale into 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

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

INT8_MIN, INT8_MAX = -128, 127
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
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


def weight_qparams(w: np.ndarray, axis: int = 0) -> QParams:
    """Symmetric per-output-channel parameters: zero point 0, range [-127, 127], ``scale_c = max|w_c| / 127``.

    A channel of zeros gets scale 1 (any scale represents it; 1 keeps its bias scale ``s_in * s_w`` sane).
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
    scale = np.where(amax > 0, _scale(amax / 127.0), np.float32(1.0)).astype(np.float32)
    return QParams(scale, 0, _INT8, axis, -127, 127)


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


def _along(p: np.ndarray, ndim: int, axis: int | None) -> np.ndarray:
    """A 0-d or 1-d per-channel parameter reshaped to broadcast along `axis` of an ndim-array."""
    if p.ndim == 0 or axis is None:
        return p
    shape = [1] * ndim
    shape[axis % ndim] = p.shape[0]
    return p.reshape(shape)


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


def quantize_multiplier(real: float | np.ndarray) -> tuple[Any, Any]:
    """A real multiplier as a 32-bit fixed-point mantissa and a power of two: ``real ~= m * 2**(shift - 31)``.

    Steps: split ``real = f * 2**e`` with f in [0.5, 1) (frexp, exact); ``m = round_half_even(f * 2**31)`` (exact
    product); if the rounding gave 2**31, take ``m = 2**30, e += 1``; ``shift = e``. So m lies in [2**30, 2**31)
    and the relative error is at most 2**-31. ``real == 0`` gives (0, 0). Scalars give Python ints, arrays give
    int32 arrays. Negative or non-finite multipliers are an error (scales are positive).
    """
    r = np.asarray(real, np.float64)
    if not np.all(np.isfinite(r)) or np.any(r < 0):
        raise ValueError(f"a requantization multiplier must be finite and >= 0, got {r.tolist()}")
    frac, exp = np.frexp(r)
    m = np.rint(np.ldexp(frac, 31)).astype(np.int64)
    carry = m == 2**31
    m = np.where(carry, 2**30, m)
    shift = np.where(r == 0, 0, exp + carry)
    if r.ndim == 0:
        return int(m), int(shift)
    return m.astype(np.int32), shift.astype(np.int32)


def requant_multiplier(input_scale: Any, weight_scale: Any, output_scale: Any) -> tuple[Any, Any]:
    """(m, shift) for ``s_in * s_w / s_out``, the factor from an int32 accumulator to the output's steps.

    Computed in float64 from the float32 scales, so every backend derives the same integers.
    """
    s_in, s_w, s_out = (np.asarray(s, np.float32).astype(np.float64) for s in (input_scale, weight_scale, output_scale))
    return quantize_multiplier(s_in * s_w / s_out)


def requantize(
    acc: np.ndarray,
    m: int | np.ndarray,
    shift: int | np.ndarray,
    zero_point: int,
    qmin: int = INT8_MIN,
    qmax: int = INT8_MAX,
    axis: int | None = None,
) -> np.ndarray:
    """Scales int32 accumulators by ``m * 2**(shift - 31)``, rounds once, adds the zero point and saturates.

    The rule (round half up, i.e. toward +inf, on the exact 64-bit product), as C with int64 arithmetic::

        int64_t v = (int64_t)acc * m;                /* exact: |acc| <= 2^31, 0 <= m < 2^31, so |v| < 2^62 */
        int s = 31 - shift;
        int64_t t;
        if (s >= 1) {
            if (s > 63) s = 63;                      /* |v| < 2^62: beyond 63 the result is 0 as well */
            t = (v + ((int64_t)1 << (s - 1))) >> s;  /* arithmetic shift: floor((v + 2^(s-1)) / 2^s) */
        } else {                                     /* real >= 2^30: any non-zero v saturates */
            int64_t c = v < -(1LL << 31) ? -(1LL << 31) : v > (1LL << 31) ? (1LL << 31) : v;
            t = c * ((int64_t)1 << (-s > 31 ? 31 : -s));
        }
        int64_t y = zero_point + t;
        y = y < qmin ? qmin : y > qmax ? qmax : y;

    (C leaves ``>>`` of a negative value implementation-defined; every compiler burnedge targets shifts
    arithmetically, and C23 requires it.) The result equals ``clamp(zp + floor(acc * m / 2^s + 1/2))`` with
    unbounded integers. `m` and `shift` may be per-channel 1-d arrays, laid along `axis` of `acc` (or
    broadcast by numpy's rules when axis is None). qmin/qmax must lie in int16's range; the result is int8 when
    [qmin, qmax] fits int8, else int16. `acc` must fit int32 (int64 arrays are checked).
    """
    a = np.asarray(acc)
    if a.dtype.kind not in "iu":
        raise TypeError(f"requantize takes integer accumulators, not {a.dtype}")
    if a.size and (a.dtype.itemsize > 4 or a.dtype == np.uint32):
        lo, hi = int(a.min()), int(a.max())
        if lo < INT32_MIN or hi > INT32_MAX:
            raise ValueError(f"accumulators [{lo}, {hi}] overflow int32")
    if not -(2**15) <= qmin < qmax <= 2**15 - 1:
        raise ValueError(f"requantize saturates to an int8 or int16 range, not [{qmin}, {qmax}]")
    m64 = _along(np.asarray(m, np.int64), a.ndim, axis)
    sh = _along(np.asarray(shift, np.int64), a.ndim, axis)
    if np.any(m64 < 0) or np.any(m64 >= 2**31):
        raise ValueError("multipliers must lie in [0, 2^31)")
    v = a.astype(np.int64) * m64
    s = 31 - sh
    s_pos = np.clip(s, 1, 63)
    t_down = (v + np.left_shift(np.int64(1), s_pos - 1)) >> s_pos
    t_up = np.clip(v, -(2**31), 2**31) * np.left_shift(np.int64(1), np.clip(-s, 0, 31))
    y = np.where(s >= 1, t_down, t_up) + np.int64(zero_point)
    out = np.int8 if INT8_MIN <= qmin and qmax <= INT8_MAX else np.int16
    return np.asarray(np.clip(y, qmin, qmax), out)
