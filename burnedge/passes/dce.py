"""Dead-code elimination: removes nodes whose outputs reach no graph output, and unused constants."""

from __future__ import annotations

from ..ir import Graph


def run(graph: Graph) -> Graph:
    graph.prune()
    return graph
