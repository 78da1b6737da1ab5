"""int8 weights that cannot overflow: per-channel weight scales with a floor, and the int32 accumulator bound.

QConv and QMatMul accumulate ``sum_k (x_k - x_zp) * w_ck + bias_c`` in int32, in the numpy reference and in C (C
reads x raw and folds ``-x_zp * sum(w)`` into the bias, wrapping modulo 2^32, so it agrees whenever the true sum
fits int32). A trained net breaks the plain scheme: after BatchNorm folding, a dead filter has max|w| ~ 1e-13, its
scale ``max|w| / 127`` ~ 1e-15, and its bias at scale ``s_in * s_w`` lies far outside int32.

The rule, per output channel c (w_c its K weights, b_c its bias, s_in the input's scale, and
``X = max(x_zp - qmin, qmax - x_zp)`` the largest |x - x_zp| an int8 input can have):

1. ``s_c = max(max|w_c| / 127, REL_FLOOR * max_c' max|w_c'| / 127)``: a channel far below the largest one gets a
   scale of at least 2^-12 of the largest channel's: its weight rounding error stays 4096x below that channel's
   (which the per-tensor output step already absorbs), and its bias scale stays sane;
2. ``room_c = INT32_MAX - X * sum_k |round(w_ck / s_c)|``, what the weights leave of int32; the bias may use half:
   ``s_c = max(s_c, |b_c| / (s_in * room_c / 2))``. Raising a scale only shrinks |q(w)|, so the weights' share
   does not grow, and ``|q(b_c)| <= room_c / 2 + 1/2``: the bias provably fits with the weights' share beside it;
3. the proof, on the integers actually emitted (`accumulator_range`): with x - x_zp anywhere in
   ``[qmin - x_zp, qmax - x_zp]`` (the calibrated range; padding's 0 lies inside), the accumulator of every
   channel stays inside int32, and C's raw sum ``128 * sum_k |q(w_ck)|`` too. A layer that fails (after steps 1-2
   only when the weights alone can overflow: K in the tens of thousands) stays float, with the reason
   (`int8_weights`). An imported QDQ model brings its own scales: there only the proof applies (`qdq/matchers.py`).
"""

from __future__ import annotations

import numpy as np

from ..ops.fixedpoint import INT32_MAX, INT32_MIN
from .qparams import QParams, dequantize, quantize, quantize_bias, weight_qparams

__all__ = ["BIAS_SHARE", "REL_FLOOR", "accumulator_range", "int8_weights", "overflow_reason", "weight_floor"]

REL_FLOOR = 2.0**-12  # a channel's weight scale is at least this fraction of the largest channel's
BIAS_SHARE = 0.5  # the bias may take this share of the int32 room the weights leave


def _channels(w: np.ndarray, axis: int) -> np.ndarray:
    """Weights as [channels, K] float64."""
    w = np.asarray(w, np.float64)
    return np.moveaxis(w, axis % w.ndim, 0).reshape(w.shape[axis % w.ndim], -1)


def _span(qp_x: QParams) -> int:
    """The largest |x - x_zp| an int8 input under `qp_x` can have."""
    return max(qp_x.zero_point - qp_x.qmin, qp_x.qmax - qp_x.zero_point)


def weight_floor(w: np.ndarray, bias: np.ndarray | None, qp_x: QParams, axis: int = 0) -> np.ndarray:
    """The smallest weight scale per output channel (steps 1 and 2 of the module's rule), float64."""
    wc = _channels(w, axis)
    plain = np.abs(wc).max(axis=1) / 127.0 if wc.shape[1] else np.zeros(wc.shape[0])
    floor = np.full(wc.shape[0], REL_FLOOR * float(plain.max(initial=0.0)))
    if bias is None:
        return floor
    s = np.maximum(plain, floor)
    safe = np.where(s > 0, s, 1.0)  # a channel of zeros quantizes to zeros under any scale
    weights = _span(qp_x) * np.minimum(np.rint(np.abs(wc) / safe[:, None]), 127).sum(axis=1)
    share = np.maximum(INT32_MAX - weights, 0.0) * BIAS_SHARE
    b = np.abs(np.asarray(bias, np.float64).reshape(-1))
    s_in = float(qp_x.scale)
    need = np.divide(b, s_in * share, out=np.zeros_like(b), where=share > 0)  # no room: the proof rejects it
    return np.maximum(floor, need)


def accumulator_range(wq: np.ndarray, bq: np.ndarray | None, qp_x: QParams, axis: int = 0) -> tuple[np.ndarray, ...]:
    """(lo, hi) int64 per output channel: the exact extremes of ``sum (x - x_zp) * q(w) + q(b)`` over int8 x."""
    wc = _channels(wq, axis).astype(np.int64)
    pos, neg = np.where(wc > 0, wc, 0).sum(axis=1), np.where(wc < 0, wc, 0).sum(axis=1)
    d_lo, d_hi = qp_x.qmin - qp_x.zero_point, qp_x.qmax - qp_x.zero_point
    b = np.zeros(wc.shape[0], np.int64) if bq is None else np.asarray(bq, np.int64).reshape(-1)
    return b + pos * d_lo + neg * d_hi, b + pos * d_hi + neg * d_lo


def overflow_reason(wq: np.ndarray, bq: np.ndarray | None, qp_x: QParams, axis: int = 0) -> str | None:
    """None when every accumulator of the layer provably fits int32 (step 3 of the module's rule), else why not."""
    lo, hi = accumulator_range(wq, bq, qp_x, axis)
    raw = 128 * np.abs(_channels(wq, axis).astype(np.int64)).sum(axis=1)
    excess = np.maximum.reduce([INT32_MIN - lo, hi - INT32_MAX, raw - INT32_MAX])
    c = int(np.argmax(excess))
    if excess[c] <= 0:
        return None
    reach = int(lo[c]) if INT32_MIN - lo[c] == excess[c] else int(max(hi[c], raw[c]))
    x_lo, x_hi = (float(v) for v in dequantize(np.array([qp_x.qmin, qp_x.qmax], np.int8), qp_x))
    k = _channels(wq, axis).shape[1]
    return (
        f"its int32 accumulators can overflow: output channel {c} reaches {reach:.4g} for inputs in the calibrated "
        f"range [{x_lo:.4g}, {x_hi:.4g}] over {k} weights"
    )


def int8_weights(
    w: np.ndarray, bias: np.ndarray | None, qp_x: QParams, axis: int = 0
) -> tuple[np.ndarray, QParams, np.ndarray | None] | str:
    """(int8 weights, their QParams, int32 bias or None) under the floored scales, or why the layer stays float.

    `w` has its output channels on `axis` (Conv: 0, MatMul's [K, N]: 1); `bias` is 1-d, one value per channel.
    """
    wf = np.asarray(w, np.float32)
    wqp = weight_qparams(wf, axis=axis, min_scale=weight_floor(wf, bias, qp_x, axis))
    wq = quantize(wf, wqp)
    qb = None if bias is None else quantize_bias(np.asarray(bias, np.float32), qp_x.scale, wqp)[0]
    why = overflow_reason(wq, qb, qp_x, axis)
    return why if why is not None else (wq, wqp, qb)
