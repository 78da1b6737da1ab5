"""Tensor lifetimes over the node order: which activation buffer lives from which step to which step."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Graph

__all__ = ["Buffer", "lifetimes"]


@dataclass(frozen=True)
class Buffer:
    """An arena-resident tensor: bytes needed, step that writes it first, step that reads it last (inclusive).

    Graph inputs are written at step -1 (before the first node); graph outputs live until the last step.
    """

    name: str
    size: int
    first: int
    last: int


def lifetimes(graph: Graph) -> list[Buffer]:
    """Buffers for every non-constant, non-object tensor of `graph`, in order of first use."""
    end = len(graph.nodes)
    first: dict[str, int] = {n: -1 for n in graph.inputs}
    last: dict[str, int] = {n: -1 for n in graph.inputs}
    for step, node in enumerate(graph.nodes):
        for n in node.uses():
            if n in last:
                last[n] = step
        for n in node.outputs:
            if n:
                first[n] = last[n] = step
    for n in graph.outputs:
        if n in last:
            last[n] = end
    out = []
    for n, f in first.items():
        v = graph.values[n]
        if v.is_const or v.dtype == object:
            continue
        out.append(Buffer(n, v.nbytes, f, last[n]))
    return out
