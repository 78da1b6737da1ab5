"""Classical ML ops of ai.onnx.ml (burnedge/ops/ml.py): Binarizer, ArrayFeatureExtractor and LabelEncoder with
numeric keys and values, as generated loops; TreeEnsemble lives in tree_ensemble.py.

Binarizer compares in double, as numpy compares an integer or float tensor with the float threshold; the
extractor copies whole elements, so it takes any fixed-size type, and checks its run-time column indices (negative
ones count from the end, as the reference's np.take): a step given one out of range returns error 2.
LabelEncoder looks each value up by binary search in its keys, sorted at compile time from the reference's own
table (`_label_table`: a repeated key keeps its last value, NaN matches a NaN key); string keys or values have
no fixed-size C form and are refused.
"""

from __future__ import annotations

import math

import numpy as np

from ....ir import REQUIRED, Node
from ....ops.ml import _key, _label_table
from . import Ctx, LowerError, ctype, lower
from .elementwise import gen_loop
from .reduce import attr

__all__: list[str] = []

ML = "ai.onnx.ml"
BINARIZER_TYPES = ("float32", "float64", "int32", "int64")


@lower("Binarizer", domain=ML)
def binarizer(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    dt = ctx.dtype(x)
    ctx.require(dt.name in BINARIZER_TYPES, f"no C Binarizer on {dt} (one of {', '.join(BINARIZER_TYPES)})")
    threshold = float(attr(node, "threshold", 0.0))
    ctx.require(not math.isnan(threshold), "threshold is NaN")
    lit = repr(threshold) if math.isfinite(threshold) else ("INFINITY" if threshold > 0 else "-INFINITY")
    ct = ctype(dt)
    return gen_loop(ctx, y, [x], lambda a, _t: ([], f"((double){a[0]} > {lit} ? ({ct})1 : ({ct})0)"))


@lower("ArrayFeatureExtractor", domain=ML)
def array_feature_extractor(ctx: Ctx, node: Node) -> str:
    x, idx, y = node.inputs[0], node.inputs[1], node.outputs[0]
    dt = ctx.dtype(x)
    ctx.require(dt.kind != "O", f"no C ArrayFeatureExtractor on {dt} (strings have no fixed size)")
    ctx.require(ctx.dtype(idx).name == "int64", f"indices of type {ctx.dtype(idx)}, expected int64")
    shape = ctx.shape(x)
    ctx.require(len(shape) >= 1, "the input is a scalar, expected rank 1 or more")
    feats, m = shape[-1], ctx.size(idx)
    rows = ctx.size(x) // feats if feats else math.prod(shape[:-1])
    if rows * m == 0:
        return "/* empty */"
    item = dt.itemsize
    return "\n".join([
        "{",
        f"  const uint8_t *xp = {ctx.tensor(x, 'uint8_t')};",
        f"  const int64_t *ip = {ctx.tensor(idx)};",
        f"  uint8_t *yp = {ctx.tensor(y, 'uint8_t')};",
        f"  for (long j = 0; j < {m}; j++) if (ip[j] < -{feats} || ip[j] >= {feats}) return 2;",
        f"  for (long r = 0; r < {rows}; r++)",
        f"    for (long j = 0; j < {m}; j++) {{",
        f"      const int64_t k = ip[j] < 0 ? ip[j] + {feats} : ip[j];",
        f"      memcpy(yp + (r * {m} + j) * {item}, xp + (r * {feats} + k) * {item}, {item});",
        "    }",
        "}",
    ])  # fmt: skip


def _c_value(v, dt: np.dtype) -> str:
    """A C literal of value `v` in type `dt` (NaN and infinities by name)."""
    if dt.kind == "f":
        f = float(v)
        if math.isnan(f):
            return "NAN"
        return ("INFINITY" if f > 0 else "-INFINITY") if math.isinf(f) else repr(f)
    return f"(({ctype(dt)}){int(v)})"


@lower("LabelEncoder", domain=ML)
def label_encoder(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    xt, yt = ctx.dtype(x), ctx.dtype(y)
    ctx.require(xt.kind in "iuf" and yt.kind in "iuf", f"keys of {xt} and values of {yt}: numeric only (no strings)")
    attrs = {k: v for k, v in node.op.attrs.items() if v is not REQUIRED} | dict(node.attrs)
    try:
        keys, values, default = _label_table(attrs)
    except ValueError as exc:
        raise LowerError(f"C backend cannot run node {node.name!r} ({node.op_type}): {exc}") from None
    ctx.require(values.dtype.kind in "iuf", "string values have no C form")
    table: dict = {}
    for k, v in zip(keys, values):  # the reference's dict: the last value of a repeated key
        table[_key(k.item() if isinstance(k, np.generic) else k)] = v
    nan_value = table.pop("nan", None)
    ordered = sorted(table)
    if ctx.size(y) == 0:
        return "/* empty */"
    kt, vt = ctype(xt), ctype(yt)
    lines = ["{", f"  const {kt} *xp = {ctx.tensor(x)};", f"  {vt} *yp = {ctx.tensor(y)};"]
    key_array = np.array(ordered, xt)
    ctx.require(key_array.tolist() == ordered, f"the keys are not all exact in {xt}, the type of x")
    if ordered:
        key_ptr = ctx.pack(f"labels:{node.name}:keys", key_array)
        value_ptr = ctx.pack(f"labels:{node.name}:values", np.array([table[k] for k in ordered], yt))
        lines += [f"  const {kt} *keys = {key_ptr};", f"  const {vt} *vals = {value_ptr};"]
    lines += [
        f"  for (long i = 0; i < {ctx.size(x)}; i++) {{",
        f"    const {kt} v = xp[i];",
        f"    {vt} r = {_c_value(default, yt)};",
    ]
    if nan_value is not None:
        lines.append(f"    if (v != v) r = {_c_value(nan_value, yt)};")
    if ordered:
        lines += [
            f"    long lo = 0, hi = {len(ordered)};",
            "    while (lo < hi) { const long mid = (lo + hi) / 2; if (keys[mid] < v) lo = mid + 1; else hi = mid; }",
            f"    if (lo < {len(ordered)} && keys[lo] == v) r = vals[lo];",
        ]
    lines += ["    yp[i] = r;", "  }", "}"]
    return "\n".join(lines)
