"""TfIdfVectorizer on integer tokens (the reference: burnedge/ops/text.py), and OptionalGetElement on a tensor.

The pool, its n-gram lengths, output columns and weights are attributes, so they become static tables; the loop
counts, per row and per pool n-gram whose length is within [min_gram_length, max_gram_length], every match with
each gap 0 .. max_skip_count (a 1-gram only with gap 0), then writes the count, the weight or count x weight
(in double, rounded to float once, as the reference does). String pools cannot reach here: strings have no place in
the arena (StaticPlanError before lowering).
"""

from __future__ import annotations

import numpy as np

from ....ir import Node
from ....ops.text import _pool, _width
from . import Ctx, ctype, lower
from .gather import _arr
from .reduce import attr
from .views import share_or_copy


@lower("OptionalGetElement")
def optional_get_element(ctx: Ctx, node: Node) -> str:
    """On a tensor (the only optional a plan holds) it is that tensor."""
    return share_or_copy(ctx, node.inputs[0], node.outputs[0])


@lower("TfIdfVectorizer")
def tfidf_vectorizer(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    dt, shape = ctx.dtype(x), ctx.shape(x)
    ctx.require(dt.name in ("int32", "int64"), f"no C TfIdfVectorizer on {dt} tokens (int32 or int64)")
    ctx.require(len(shape) in (1, 2), f"TfIdfVectorizer takes a [C] or [N, C] input, not shape {list(shape)}")
    mode = attr(node, "mode")
    ctx.require(mode in ("TF", "IDF", "TFIDF"), f"mode is {mode!r}, expected 'TF', 'IDF' or 'TFIDF'")
    lo, hi, skips = attr(node, "min_gram_length"), attr(node, "max_gram_length"), attr(node, "max_skip_count")
    indexes = list(attr(node, "ngram_indexes"))
    grams = _pool(attr(node, "ngram_counts"), [int(v) for v in attr(node, "pool_int64s", []) or []], hi)
    weights = attr(node, "weights", None)
    w = np.ones(len(indexes)) if weights is None else np.asarray(weights, np.float64)
    chosen = [(g, j) for g, j in grams.items() if max(lo, 1) <= len(g) <= hi]
    rows, cols, width = (1 if len(shape) == 1 else shape[0]), shape[-1], _width(indexes)
    if not chosen or rows * width == 0:
        return f"memset({ctx.tensor(y)}, 0, {rows * width * 4});"
    flat = [v for g, _ in chosen for v in g]
    starts = np.cumsum([0] + [len(g) for g, _ in chosen[:-1]])
    value = {"TF": "(double)cnt", "IDF": "gw[g]", "TFIDF": "(double)cnt * gw[g]"}[mode]
    return (
        f"{{ static const int64_t pool[] = {_arr(flat)};\n"
        f"  static const int32_t gs[] = {_arr(starts)}, gn[] = {_arr(len(g) for g, _ in chosen)}, "
        f"gc[] = {_arr(indexes[j] for _, j in chosen)};\n"
        f"  static const double gw[] = {{{', '.join(repr(float(w[j])) for _, j in chosen)}}};\n"
        f"  const {ctype(dt)} *x = {ctx.tensor(x)}; float *y = {ctx.tensor(y)};\n"
        f"  memset(y, 0, {rows * width * 4});\n"
        f"  for (int64_t r = 0; r < {rows}; r++) {{\n"
        f"    const {ctype(dt)} *row = x + r * {cols}; float *out = y + r * {width};\n"
        f"    for (int g = 0; g < {len(chosen)}; g++) {{\n"
        f"      int64_t n = gn[g], cnt = 0;\n"
        f"      for (int64_t step = 1; step <= (n == 1 ? 1 : {skips + 1}); step++)\n"
        f"        for (int64_t s = 0; s + (n - 1) * step < {cols}; s++) {{\n"
        f"          int64_t k = 0;\n"
        f"          while (k < n && (int64_t)row[s + k * step] == pool[gs[g] + k]) k++;\n"
        f"          cnt += k == n;\n"
        f"        }}\n"
        f"      if (cnt) out[gc[g]] = (float)({value});\n"
        f"    }}\n"
        f"  }}\n}}"
    )
