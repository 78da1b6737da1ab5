"""Calibrators: collect statistics of float tensors over calibration data, then compute one range per tensor.

Lifecycle: ``observe(name, array)`` for every tensor of every batch, then ``compute()`` once, which returns
``{name: (min, max)}`` in the order the tensors were first observed. A range need not contain 0;
``qparams.activation_qparams`` widens it. Non-finite values (an attention mask's -inf, say) are left out of
every statistic and counted in ``nonfinite``.

Determinism: the same values give byte-identical ranges, whatever the batching and the batch order. Min/max
are exact; the histogram calibrators count |x| in a fixed number of bins over [0, 2**k), where 2**k is the
smallest power of two above the largest |x| seen. When a batch raises k, the counts are merged by summing
groups of 2**(k' - k) neighbouring bins: each old bin lies inside exactly one new bin (bin edges are multiples of
a power of two, and the index ``floor(|x| * 2**(log2(bins) - k))`` is exact: scaling by a power of two rounds
nothing), so the merged histogram equals the one built at the final k in one go. No second pass over the data.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from ..dtypes import is_float
from ..errors import BurnedgeError

__all__ = ["CALIBRATORS", "Calibrator", "Entropy", "MSE", "MinMax", "Percentile", "make_calibrator"]

Range = tuple[float, float]


class Calibrator:
    """Base class: tracks the exact finite min/max (and counts) of each tensor; subclasses add statistics."""

    name: ClassVar[str] = ""

    def __init__(self) -> None:
        self._min: dict[str, float] = {}
        self._max: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        self.nonfinite: dict[str, int] = {}

    def observe(self, name: str, array: Any) -> None:
        """Adds the values of one float tensor (one batch's worth) to the statistics of `name`."""
        x = np.asarray(array)
        if not is_float(x.dtype):
            raise TypeError(f"calibrators observe float tensors; {name!r} is {x.dtype}")
        if x.dtype not in (np.float32, np.float64):
            x = x.astype(np.float32)  # float16, bfloat16: exact in float32
        x = x.ravel()
        finite = np.isfinite(x)
        if not finite.all():
            self.nonfinite[name] = self.nonfinite.get(name, 0) + int(x.size - finite.sum())
            x = x[finite]
        self.counts[name] = self.counts.get(name, 0) + int(x.size)
        if x.size:
            lo, hi = float(x.min()) + 0.0, float(x.max()) + 0.0  # + 0.0 turns -0.0 into 0.0
            self._min[name] = min(lo, self._min.get(name, lo))
            self._max[name] = max(hi, self._max.get(name, hi))
            self._observe(name, x)

    def _observe(self, name: str, x: np.ndarray) -> None:
        """Subclass hook: `x` is a non-empty float32 or float64 vector of finite values."""

    def minmax(self, name: str) -> Range:
        """The exact range of the finite values seen for `name`; (0, 0) when there were none."""
        return self._min.get(name, 0.0), self._max.get(name, 0.0)

    def _range(self, name: str) -> Range:
        return self.minmax(name)

    def compute(self) -> dict[str, Range]:
        """{tensor name: (min, max)} for every tensor observed, in first-observed order."""
        return {name: self._range(name) for name in self.counts}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self.counts)} tensors)"


class MinMax(Calibrator):
    """The exact range of the values seen: nothing clipped, so outliers widen the step for everyone."""

    name = "minmax"


class _Histogram:
    """Counts of |x| in `bins` equal bins over [0, 2**k), kept apart for x > 0 and x < 0; exact zeros apart too."""

    def __init__(self, bins: int):
        self.bins = bins
        self.log2 = bins.bit_length() - 1
        self.k: int | None = None  # unset until a non-zero value is seen, so all-zero batches fix no scale
        self.pos = np.zeros(bins, np.int64)
        self.neg = np.zeros(bins, np.int64)
        self.zeros = 0

    @property
    def width(self) -> float:
        return math.ldexp(1.0, (self.k or 0) - self.log2)

    def add(self, x: np.ndarray) -> None:
        a = np.abs(x)
        amax = float(a.max())
        zeros = int(x.size - np.count_nonzero(x))
        self.zeros += zeros
        if amax == 0:
            return
        k = math.frexp(amax)[1]  # max|x| < 2**k
        if self.k is None:
            self.k = k
        elif k > self.k:
            self._grow(k)
        e = self.log2 - self.k
        if a.dtype != np.float64 and not -120 < e < 120:
            a = a.astype(np.float64)  # 2**e must be a float32 too
        # |x| * 2**e is exact (a power-of-two scaling that stays below `bins`), so truncation is the exact floor;
        # negative values count in the upper half, exact zeros (all in bin 0) are taken back out
        idx = (a * a.dtype.type(math.ldexp(1.0, e))).astype(np.int64)
        np.add(idx, self.bins, out=idx, where=x < 0)
        counts = np.bincount(idx, minlength=2 * self.bins)
        counts[0] -= zeros
        self.pos += counts[: self.bins]
        self.neg += counts[self.bins :]

    def _grow(self, k: int) -> None:
        assert self.k is not None
        f = 1 << min(k - self.k, self.log2)
        for h in (self.pos, self.neg):
            merged = h.reshape(self.bins // f, f).sum(axis=1)
            h[:] = 0
            h[: merged.size] = merged
        self.k = k

    def absolute(self) -> np.ndarray:
        """Counts of |x| (zeros in bin 0)."""
        h = self.pos + self.neg
        h[0] += self.zeros
        return h


def _clip(lo: float, hi: float, t: float) -> Range:
    """[lo, hi] clipped into [-t, t] (both ends; a one-signed range beyond t collapses onto t)."""
    return min(max(lo, -t), t), max(min(hi, t), -t)


class _HistogramCalibrator(Calibrator):
    """A calibrator that picks a clipping threshold t on |x| from a histogram; [min, max] is clipped into [-t, t]."""

    def __init__(self, bins: int = 2048):
        super().__init__()
        if bins < 16 or bins & (bins - 1):
            raise BurnedgeError(f"bins must be a power of two >= 16, got {bins}")
        self.bins = bins
        self.histograms: dict[str, _Histogram] = {}

    def _observe(self, name: str, x: np.ndarray) -> None:
        if name not in self.histograms:
            self.histograms[name] = _Histogram(self.bins)
        self.histograms[name].add(x)

    def _range(self, name: str) -> Range:
        lo, hi = self.minmax(name)
        h = self.histograms.get(name)
        if h is None or h.k is None:
            return lo, hi
        return _clip(lo, hi, self._threshold(h, lo, hi))

    def _threshold(self, h: _Histogram, lo: float, hi: float) -> float:
        raise NotImplementedError


class Percentile(_HistogramCalibrator):
    """Clips |x| at the `percentile`-th percentile, read off the histogram.

    The threshold is the upper edge of the first bin where the cumulative count of |x| reaches
    ``percentile / 100`` of all values, so it errs by at most one bin width toward keeping values.
    """

    name = "percentile"

    def __init__(self, percentile: float = 99.99, bins: int = 2048):
        super().__init__(bins)
        if not 0 < percentile <= 100:
            raise BurnedgeError(f"percentile must lie in (0, 100], got {percentile}")
        self.percentile = float(percentile)

    def _threshold(self, h: _Histogram, lo: float, hi: float) -> float:
        cum = np.cumsum(h.absolute())
        i = int(np.searchsorted(cum, self.percentile / 100.0 * float(cum[-1])))
        return (min(i, h.bins - 1) + 1) * h.width


class Entropy(_HistogramCalibrator):
    """Clips |x| where the quantized distribution loses the least information (KL divergence, TensorRT style).

    Steps, on the histogram h of |x| (n = the number of bins up to the last non-empty one):
      1. Set h[0] = h[1]: bin 0 holds every exact zero (ReLU outputs), which would otherwise dominate.
      2. Quantized levels L: 256 when the tensor is one-signed (int8 spends all its steps on [0, t]), else 128.
      3. For each candidate i from L to n, threshold t_i = i * width:
         a. reference P = h[:i] with every count beyond i added to P[i-1] (clipped values land on the edge);
         b. Q: merge h[:i] into L groups (bin j goes to group j * L // i), then spread each group's total evenly
            over its non-empty bins (empty bins stay empty);
         c. where Q is empty but P is not (clipped counts piled on an empty edge bin), give Q a count of 1e-4
            (MXNet's smoothing); normalise both and take KL(P || Q) = sum P log(P / Q) over P > 0. A candidate
            whose bins below the edge bin are all empty scores infinity: P and Q would be one and the same spike
            (divergence 0) however much was clipped, which sparse histograms (a few softmax outputs) hit.
      4. Keep the first i with the smallest divergence. If n <= L, nothing is clipped.
    All candidates are scored at once: with prefix sums of h, h > 0 and h log h, step 3 costs O(L) per candidate,
    since sum P log Q = sum over groups of S_g log(S_g / F_g) (S_g the group's count, F_g its non-empty bins),
    corrected for the edge bin.
    """

    name = "entropy"

    def __init__(self, bins: int = 2048):
        super().__init__(bins)
        if bins < 512:
            raise BurnedgeError(f"the entropy calibrator needs at least 512 bins, got {bins}")

    def _threshold(self, h: _Histogram, lo: float, hi: float) -> float:
        counts = h.absolute().astype(np.float64)
        counts[0] = counts[1]
        n = int(np.flatnonzero(counts)[-1]) + 1
        levels = 256 if lo >= 0 or hi <= 0 else 128
        if n <= levels:
            return n * h.width
        i, kl = _divergences(counts, levels, n)
        return int(i[int(np.argmin(kl))]) * h.width


def _xlogy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x * log(y), 0 where x == 0."""
    return np.where(x > 0, x * np.log(np.where(x > 0, y, 1.0)), 0.0)


def _divergences(counts: np.ndarray, levels: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(candidates i = levels .. n, KL(P_i || Q_i) for each), per Entropy's steps, vectorised over candidates."""
    total_count = np.concatenate([[0.0], np.cumsum(counts)])
    filled_count = np.concatenate([[0.0], np.cumsum(counts > 0)])
    plogp_count = np.concatenate([[0.0], np.cumsum(_xlogy(counts, counts))])
    total = float(total_count[-1])
    i = np.arange(levels, n + 1)
    # group g of candidate i holds bins [ceil(g i / L), ceil((g + 1) i / L))
    edges = (np.arange(levels + 1)[None, :] * i[:, None] + levels - 1) // levels
    sums = total_count[edges[:, 1:]] - total_count[edges[:, :-1]]
    filled = filled_count[edges[:, 1:]] - filled_count[edges[:, :-1]]
    mean = np.divide(sums, filled, out=np.ones_like(sums), where=filled > 0)
    edge = counts[i - 1]
    beyond = total - total_count[i]
    p_edge = edge + beyond
    q_edge = np.where(edge > 0, mean[:, -1], _EPS)
    plogq = np.sum(sums * np.log(mean), axis=1) - _xlogy(edge, mean[:, -1]) + _xlogy(p_edge, q_edge)
    plogp = plogp_count[i - 1] + _xlogy(p_edge, p_edge)
    q_total = total_count[i] + np.where((edge == 0) & (beyond > 0), _EPS, 0.0)
    kl = (plogp - plogq) / total - np.log(total) + np.log(q_total)
    return i, np.where(total_count[i - 1] > 0, kl, np.inf)  # all below t in the edge bin: P, Q one same spike


_EPS = 1e-4


class MSE(_HistogramCalibrator):
    """Clips |x| where the expected squared quantization error is smallest.

    For each candidate t = i * width (i = 1 .. n, n as for Entropy), the range is [min, max] clipped into [-t, t],
    widened to contain 0, with step s = (hi - lo) / 255. Its error is estimated from the signed histograms with
    each value at its bin centre: clipped values cost (|x| - t)^2, the values inside cost s^2 / 12 each (uniform
    rounding error), exact zeros cost nothing. The clipping sums are correlations of the counts with (d + 1/2)^2,
    so every term is non-negative (no cancellation). The first t with the smallest error wins.
    """

    name = "mse"

    def _threshold(self, h: _Histogram, lo: float, hi: float) -> float:
        both = h.pos + h.neg
        n = int(np.flatnonzero(both)[-1]) + 1
        w = h.width
        kernel = (np.arange(h.bins) + 0.5) ** 2
        clipped = np.zeros(h.bins + 1)
        tail = np.zeros(h.bins + 1)
        for counts in (h.pos.astype(np.float64), h.neg.astype(np.float64)):
            # clipped[i] = sum_{d >= 0} counts[i + d] * (d + 1/2)^2, by a convolution of the reversed counts
            clipped[: h.bins] += np.convolve(counts[::-1], kernel)[: h.bins][::-1]
            tail[: h.bins] += np.cumsum(counts[::-1])[::-1]
        i = np.arange(1, n + 1)
        t = i * w
        top = np.maximum(np.minimum(hi, t), 0.0)
        bottom = np.minimum(np.maximum(lo, -t), 0.0)
        step = (top - bottom) / 255.0
        inside = float(both.sum()) - tail[i]
        err = w * w * clipped[i] + inside * step * step / 12.0
        return float(t[int(np.argmin(err))])


CALIBRATORS: dict[str, type[Calibrator]] = {c.name: c for c in (MinMax, Percentile, Entropy, MSE)}


def make_calibrator(method: str, **options: Any) -> Calibrator:
    """A fresh calibrator by name ("minmax", "percentile", "entropy", "mse") with its keyword options."""
    cls = CALIBRATORS.get(method.lower())
    if cls is None:
        raise BurnedgeError(f"unknown calibration method {method!r}; available: {', '.join(sorted(CALIBRATORS))}")
    try:
        return cls(**options)
    except TypeError as exc:
        raise BurnedgeError(f"calibration method {method!r}: {exc}") from None
