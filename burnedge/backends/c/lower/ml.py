"""Classical ML ops of ai.onnx.ml (burnedge/ops/ml.py): Binarizer and ArrayFeatureExtractor as generated loops;
TreeEnsemble lives in tree_ensemble.py.

Binarizer compares in double, as numpy compares an integer or float tensor with the float threshold; the
extractor copies whole elements, so it takes any fixed-size type, and checks its run-time column indices (negative
ones count from the end, as the reference's np.take): a step given one out of range returns error 2.
"""

from __future__ import annotations

import math

from ....ir import Node
from . import Ctx, ctype, lower
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
