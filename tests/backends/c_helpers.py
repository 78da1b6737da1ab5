"""What the C backend tests share: a graph planned by the compiler for the C backend, and its generated source."""

from __future__ import annotations

from burnedge import compiler
from burnedge.backends.c import BACKEND, io_slots
from burnedge.backends.c.emit import Emitted, emit
from burnedge.ir import Graph
from burnedge.plan import Plan

__all__ = ["io_slots", "prepare", "slots"]

slots = io_slots


def prepare(graph: Graph, options: compiler.Options | None = None) -> tuple[Plan, Emitted]:
    """The plan the compiler makes of `graph` for the C backend, and the C it emits."""
    plan = compiler.plan(graph, BACKEND, options)
    return plan, emit(plan, graph.name)
