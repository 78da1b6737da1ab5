"""Constant folding: a node whose inputs are all constants is evaluated once, with its numpy reference."""

from __future__ import annotations

from ..ir import Graph, Value
from ..ops._eval import evaluate


def run(graph: Graph) -> Graph:
    kept = []
    for node in graph.nodes:
        values = [graph.values[n] if n else None for n in node.uses()]
        if node.op.random or not all(v is None or v.is_const for v in values):
            kept.append(node)
            continue
        ins = [graph.values[n].data if n else None for n in node.inputs]
        outs = evaluate(node, ins, {n: graph.values[n].data for n in node.captures})
        for name, arr in zip(node.outputs, outs):
            if name:
                graph.values[name] = Value(name, arr.dtype, arr.shape, arr)
    graph.nodes = kept
    return graph
