"""Constant folding: a node whose inputs are all constants is evaluated once, with its numpy reference.

CastLike(constant, t) folds too: it reads t for its dtype only, and keeping it would give t a reader that is not
there (which blocks fusing t's producer).
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Value
from ..ops.interpreter import evaluate


def run(graph: Graph) -> Graph:
    kept = []
    for node in graph.nodes:
        values = [graph.values[n] if n else None for n in node.uses()]
        castlike = node.op_type == "CastLike" and not node.op.domain and values[0] is not None and values[0].is_const
        if node.op.random or not (castlike or all(v is None or v.is_const for v in values)):
            kept.append(node)
            continue
        ins = [graph.values[n].data if n else None for n in node.inputs]
        if castlike:
            ins[1] = np.empty((0,), graph.values[node.inputs[1]].dtype)
        outs = evaluate(node, ins, {n: graph.values[n].data for n in node.captures})
        for name, arr in zip(node.outputs, outs):
            if name:
                graph.values[name] = Value(name, arr.dtype, arr.shape, arr)
    graph.nodes = kept
    return graph
