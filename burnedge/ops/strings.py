"""String ops: StringConcat, RegexFullMatch, StringSplit (opset 20) and StringNormalizer (opset 10).

Spec: https://onnx.ai/onnx/operators/. String tensors are numpy object arrays of Python str; they live outside the
arena (backends/numpy). RegexFullMatch's pattern is RE2 syntax, run here by Python's `re` (the two agree on the
common subset: classes, groups, alternation, anchors, \\b, \\w, \\W, counted repetition). StringSplit and
StringNormalizer give shapes that depend on the strings (dynamic_shape: their inputs must be bound).
"""

from __future__ import annotations

import operator
import re

import numpy as np

from . import Spec, register

__all__: list[str] = []

_concat = np.frompyfunc(operator.add, 2, 1)


def _strings(x: np.ndarray, op: str) -> np.ndarray:
    """`x` as an object array of str; any other dtype is an error naming the op."""
    if x.dtype != object:
        raise ValueError(f"{op} needs a string tensor, got {x.dtype}")
    return x


@register("StringConcat", since=20)
def string_concat(x, y):
    """StringConcat opset 20: x + y elementwise, numpy broadcasting."""
    out = _concat(_strings(x, "StringConcat"), _strings(y, "StringConcat"))
    return np.asarray(out, dtype=object).reshape(np.broadcast_shapes(x.shape, y.shape))


def _regex_infer(x, *, pattern):
    re.compile(pattern)  # a bad pattern is an error at import, not at run time
    return [Spec(tuple(x.shape), np.dtype(bool))]


@register("RegexFullMatch", since=20, infer=_regex_infer)
def regex_full_match(x, *, pattern):
    """RegexFullMatch opset 20: whether each whole string matches `pattern`."""
    rx = re.compile(pattern)
    flat = [rx.fullmatch(s) is not None for s in _strings(x, "RegexFullMatch").reshape(-1)]
    return np.array(flat, dtype=bool).reshape(x.shape)


@register("StringSplit", since=20, dynamic_shape=True)
def string_split(x, *, delimiter=None, maxsplit=None):
    """StringSplit opset 20: substrings (x.shape + [most pieces], padded with "") and the count of each.

    An empty or absent delimiter splits on runs of whitespace and drops leading and trailing whitespace, as
    Python's str.split() does; a delimiter splits on each occurrence (consecutive ones give empty pieces).
    `maxsplit` caps the splits per string: the rest stays in the last piece.
    """
    sep = delimiter or None
    limit = -1 if maxsplit is None else int(maxsplit)
    pieces = [s.split(sep, limit) for s in _strings(x, "StringSplit").reshape(-1)]
    width = max((len(p) for p in pieces), default=0)
    out = np.full((len(pieces), width), "", dtype=object)
    for i, p in enumerate(pieces):
        out[i, : len(p)] = p
    lengths = np.array([len(p) for p in pieces], dtype=np.int64)
    return out.reshape(*x.shape, width), lengths.reshape(x.shape)


_CASES = {"NONE": lambda s: s, "LOWER": str.lower, "UPPER": str.upper}


@register("StringNormalizer", since=10, dynamic_shape=True)
def string_normalizer(x, *, case_change_action="NONE", is_case_sensitive=0, locale="", stopwords=None):
    """StringNormalizer opset 10: drops the stopwords from a [C] or [1, C] tensor, then changes case.

    Stopwords match exactly when `is_case_sensitive`, else ignoring case. When every string is dropped the
    output is one empty string ([1] or [1, 1]), as the spec says. `locale` is not used: case changes follow
    Unicode (str.lower / str.upper).
    """
    if case_change_action not in _CASES:
        raise ValueError(f"case_change_action must be one of {sorted(_CASES)}, not {case_change_action!r}")
    if not (x.ndim == 1 or (x.ndim == 2 and x.shape[0] == 1)):
        raise ValueError(f"StringNormalizer takes a [C] or [1, C] tensor, not shape {list(x.shape)}")
    words = list(_strings(x, "StringNormalizer").reshape(-1))
    stop = set(stopwords or [])
    if is_case_sensitive:
        kept = [w for w in words if w not in stop]
    else:
        folded = {s.casefold() for s in stop}
        kept = [w for w in words if w.casefold() not in folded]
    kept = [_CASES[case_change_action](w) for w in kept] or [""]
    out = np.array(kept, dtype=object)
    return out if x.ndim == 1 else out.reshape(1, -1)
