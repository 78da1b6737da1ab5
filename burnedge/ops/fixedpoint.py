"""THE fixed-point rule of int8: multipliers from scales, the one requantisation rounding, the rounding helpers.

Written once and imported by the int8 ops (`ops/quantized.py`, the bit-exact spec), quantisation (`quantize/`)
and every backend's lowering, so numpy, C (x86, NEON, Cortex-M) and OpenCL agree bit for bit (DESIGN.md, "int8"):

- a real factor ``r`` (``s_in * s_w / s_out``) is a 32-bit mantissa ``m`` and a power of two:
  ``r ~= m * 2**(shift - 31)`` (`quantize_multiplier`, `requant_multiplier`);
- an int32 accumulator goes back to int8 by ``m`` and ``shift`` with one rounding, half up, in 64-bit integers
  (`requantize`);
- QAdd rescales both operands to the output in one 64-bit sum (`add_multipliers`), rounded once (`round_shift`);
- averages divide with `round_div` (half away from zero, C's truncating division).

Nothing here knows about graphs or QParams: only numbers and arrays.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "INT32_MAX",
    "INT32_MIN",
    "INT8_MAX",
    "INT8_MIN",
    "add_multipliers",
    "along",
    "quantize_multiplier",
    "requant_multiplier",
    "requantize",
    "round_div",
    "round_shift",
]

INT8_MIN, INT8_MAX = -128, 127
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def along(p: np.ndarray, ndim: int, axis: int | None) -> np.ndarray:
    """A 0-d or 1-d per-channel parameter reshaped to broadcast along `axis` of an ndim-array."""
    if p.ndim == 0 or axis is None:
        return p
    shape = [1] * ndim
    shape[axis % ndim] = p.shape[0]
    return p.reshape(shape)


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


def add_multipliers(s_a: Any, s_b: Any, s_y: Any) -> tuple[int, int, int]:
    """(a_multiplier, b_multiplier, shift) of QAdd for the float32 scales of a, b and the output y.

    With ``ra = s_a / s_y`` and ``rb = s_b / s_y`` (float64 from the float32 scales): shift puts the larger
    multiplier in [2^30, 2^31), ``shift = 31 - e`` with ``max(ra, rb) = f * 2^e``, f in [0.5, 1); each multiplier
    is ``round_half_even(r * 2^shift)`` (exact ldexp); a rounding up to 2^31 takes one off the shift. A shift
    outside [1, 62] (scales too far apart for one 64-bit sum) is a ValueError.
    """
    ra = float(np.float32(s_a)) / float(np.float32(s_y))
    rb = float(np.float32(s_b)) / float(np.float32(s_y))
    big = max(ra, rb)
    if not (big > 0 and math.isfinite(big)):
        raise ValueError(f"QAdd needs positive finite scales: s_a/s_y={ra:g}, s_b/s_y={rb:g}")
    shift = 31 - math.frexp(big)[1]
    while True:
        ma, mb = (int(np.rint(math.ldexp(r, shift))) for r in (ra, rb))
        if max(ma, mb) < 2**31:
            break
        shift -= 1
    if not 1 <= shift <= 62:
        raise ValueError(f"QAdd scales too far apart: s_a/s_y={ra:g}, s_b/s_y={rb:g}")
    return ma, mb, shift


def round_shift(v: np.ndarray, s: int) -> np.ndarray:
    """floor((v + 2^(s-1)) / 2^s) on int64: rounds half up. s >= 1.

    As C: ``(v + (1 << (s - 1))) >> s`` (int64, arithmetic right shift).
    """
    return (np.asarray(v, np.int64) + (np.int64(1) << np.int64(s - 1))) >> np.int64(s)


def round_div(a: np.ndarray, n: np.ndarray) -> np.ndarray:
    """a / n rounded half away from zero, with C's truncating division on int64 (n > 0).

    As C: ``a >= 0 ? (a + n / 2) / n : -((-a + n / 2) / n)``.
    """
    a = np.asarray(a, np.int64)
    n = np.asarray(n, np.int64)
    mag = (np.abs(a) + n // 2) // n
    return np.where(a >= 0, mag, -mag)


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
    m64 = along(np.asarray(m, np.int64), a.ndim, axis)
    sh = along(np.asarray(shift, np.int64), a.ndim, axis)
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
