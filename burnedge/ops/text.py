"""Text features: TfIdfVectorizer (opset 9), the n-gram counter of scikit-learn's text pipelines.

Spec: https://onnx.ai/onnx/operators/onnx__TfIdfVectorizer.html. The pool holds the n-grams to count, shortest
first: `ngram_counts[i]` is where the (i+1)-grams start in it, and `ngram_indexes[j]` is the output column of the
j-th n-gram of the pool. An n-gram of X takes n items spaced skip + 1 apart (skip 0 .. max_skip_count, the same
gap throughout); 1-grams are counted once whatever the skip. Rows of a [N, C] input never share an n-gram.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from . import Spec, register

__all__: list[str] = []

_MODES = ("TF", "IDF", "TFIDF")


def _pool(ngram_counts, pool, max_n: int) -> dict[tuple, int]:
    """{n-gram tuple: its index in the pool}; the pool's j-th n-gram is the j-th entry in pool order."""
    starts = list(ngram_counts) + [len(pool)]
    grams: dict[tuple, int] = {}
    j = 0
    for n in range(1, min(len(ngram_counts), max_n) + 1):
        lo, hi = starts[n - 1], starts[n]
        if (hi - lo) % n:
            raise ValueError(f"pool entries {lo}..{hi} do not split into {n}-grams")
        for k in range(lo, hi, n):
            grams[tuple(pool[k : k + n])] = j
            j += 1
    return grams


def _count_row(row: list, grams: dict[tuple, int], min_n: int, max_n: int, max_skip: int) -> Counter:
    counts: Counter = Counter()
    for n in range(max(min_n, 1), max_n + 1):
        for skip in [0] if n == 1 else range(max_skip + 1):  # a 1-gram has no gap to vary
            step = skip + 1
            for start in range(len(row) - (n - 1) * step):
                j = grams.get(tuple(row[start : start + (n - 1) * step + 1 : step]))
                if j is not None:
                    counts[j] += 1
    return counts


def _width(ngram_indexes) -> int:
    return int(max(ngram_indexes)) + 1 if len(ngram_indexes) else 0


def _infer(x, *, max_gram_length, max_skip_count, min_gram_length, mode, ngram_counts, ngram_indexes, **_):
    lead = () if len(x.shape) == 1 else (x.shape[0],)
    return [Spec((*lead, _width(ngram_indexes)), np.dtype(np.float32))]


@register("TfIdfVectorizer", since=9, infer=_infer)
def tfidf_vectorizer(
    x, *, max_gram_length, max_skip_count, min_gram_length, mode, ngram_counts, ngram_indexes, pool_int64s=None,
    pool_strings=None, weights=None,
):  # fmt: skip
    """TfIdfVectorizer opset 9: per row, the count (TF), the weight if present (IDF) or count * weight (TFIDF) of
    every pool n-gram, as float32 [width] or [N, width]."""
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {_MODES}, not {mode!r}")
    if x.ndim not in (1, 2):
        raise ValueError(f"TfIdfVectorizer takes a [C] or [N, C] input, not shape {list(x.shape)}")
    pool = list(pool_strings) if pool_strings is not None else [int(v) for v in (pool_int64s or [])]
    grams = _pool(ngram_counts, pool, max_gram_length)
    rows = x.reshape(1, -1) if x.ndim == 1 else x
    w = np.ones(len(ngram_indexes)) if weights is None else np.asarray(weights, np.float64)
    out = np.zeros((rows.shape[0], _width(ngram_indexes)), np.float64)
    for r, row in enumerate(rows):
        items = [v if pool_strings is not None else int(v) for v in row]
        for j, c in _count_row(items, grams, min_gram_length, max_gram_length, max_skip_count).items():
            col = ngram_indexes[j]
            out[r, col] = c if mode == "TF" else (w[j] if mode == "IDF" else c * w[j])
    return (out[0] if x.ndim == 1 else out).astype(np.float32)
