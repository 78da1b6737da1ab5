"""Which matrix products hurt the model output most in int8, measured: the one-at-a-time sensitivity analysis that
picks keep-float auto's weight-only fallbacks.

Why measured and not read from the per-layer SQNR: in a transformer the error of a per-tensor int8 activation is
made where a heavy-tailed tensor (a GELU output, a LayerNorm output with outlier channels) is quantized, which is at
the *input* of the projection reading it. The SQNR drop points at the producer, and keeping the producer float
changes nothing, since its reader quantizes the same tensor again. Quantizing one layer alone, everything else
float, and measuring the model output sees the cost where it is paid.

Steps: for each candidate (an int8 MatMul/Gemm with constant weights), rewrite with only it in int8 and measure the
model output on the first validation frame (the whole stream for a recurrent model); rank by that output's cosine,
lowest first (ties: SQNR, then node order). Cost: one int8 run of the graph per candidate and frame.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..ir import Graph
from .measure import measure
from .rewrite import rewrite

__all__ = ["MATMULS", "MIN_WEIGHTS", "candidates", "rank_alone"]

MATMULS = ("QMatMul",)  # int8 ops whose node can fall back to weight-only int8
MIN_WEIGHTS = 4096  # smaller weight matrices save too little to be kept int8 (a float layer in disguise)


def candidates(graph: Graph, layers: Mapping[str, str]) -> list[str]:
    """The nodes of `layers` (node -> its int8 op) that may fall back to weight-only int8: matrix products with
    constant weights of at least MIN_WEIGHTS elements, in node order."""
    out = []
    for node in graph.nodes:
        w = graph.values[node.inputs[1]].data if len(node.inputs) > 1 and node.inputs[1] else None
        if layers.get(node.name) in MATMULS and w is not None and w.size >= MIN_WEIGHTS:
            out.append(node.name)
    return out


def rank_alone(
    graph: Graph,
    ranges: Mapping[str, tuple[float, float]],
    candidates: Sequence[str],
    frames: Sequence[Mapping[str, Any]],
    reference: Sequence[Mapping[str, np.ndarray]],
    pairs: Mapping[str, str],
    unsafe: Mapping[str, str],
) -> list[tuple[str, float]]:
    """`candidates` as (node, model-output cosine with it alone in int8), the most harmful first."""
    n = len(frames) if pairs else 1
    names = {node.name for node in graph.nodes}
    scored = []
    for i, layer in enumerate(candidates):
        keep = names - {layer}
        rw = rewrite(graph, ranges, keep, {}, unsafe)
        acc = measure(rw, frames[:n], reference[:n], pairs, f"sensitivity of {layer}")
        rows = [r for r in acc.rows if r.tensor in graph.outputs]
        cos = min((r.cosine for r in rows), default=1.0)
        db = min((r.sqnr_db for r in rows), default=math.inf)
        cos = -1.0 if math.isnan(cos) else cos
        scored.append(((cos, -math.inf if math.isnan(db) else db, i), layer))
    scored.sort()
    return [(layer, key[0]) for key, layer in scored]
