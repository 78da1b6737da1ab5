"""The int8 rewrite: a calibrated float graph becomes a graph of burnedge int8 ops with float islands.

Input: a float graph already optimised and split (`prepare.split_fused`), the calibrated range of every float
tensor, and the names of nodes to keep in float. Output: a `Rewrite` (`rewriter.py`) whose ``.out`` computes the
same function in int8 where an int8 rule applies (`rules.RULES`), with what the report needs.

Steps: copy inputs and constants; for each node in order, skip it when its producer folded it (a Relu/Clip clamp),
keep it float when asked (a MatMul asked weight-only gets int8-level weights) or when no rule applies (reason
recorded), else let its rule emit int8 nodes; finally
dequantize every graph output held in int8, prune unused constants, verify.
"""

from __future__ import annotations

from collections.abc import Mapping, Set

from ..ir import Graph
from .rewriter import Decision, Rewrite
from .rules import RULES
from .rules.matmul import weight_only

__all__ = ["Decision", "Rewrite", "rewrite"]


def _walk(rw: Rewrite) -> Graph:
    """Applies the rules to every node of ``rw.src`` in order; returns the verified int8 graph ``rw.out``."""
    for node in rw.src.nodes:
        if id(node) in rw.absorbed:
            continue
        why = rw.kept_by_user(node)
        if why is not None:
            if node.name not in rw.weight_only or not weight_only(rw, node, why):
                rw.keep_float(node, why)
            continue
        rule = RULES.get(node.op.key)
        if rule is None:
            rw.keep_float(node, f"{node.op_type} (no int8 rule)")
            continue
        reason = rule(rw, node)
        if reason:
            rw.keep_float(node, f"{node.op_type} ({reason})")
    for name in rw.src.outputs:
        rw.float(name)
    rw.out.prune()
    rw.out.verify()
    return rw.out


def rewrite(
    graph: Graph,
    ranges: Mapping[str, tuple[float, float]],
    keep: Set[str] = frozenset(),
    notes: Mapping[str, str] | None = None,
    unsafe: Mapping[str, str] | None = None,
    weight_only: Set[str] = frozenset(),
) -> Rewrite:
    """Runs the rewrite of a prepared float graph; the result's `.out` is the int8 graph. Nodes in `keep` stay
    float; those also in `weight_only` (MatMul/Gemm with constant weights) get int8 weights and float inputs."""
    r = Rewrite(graph, ranges, keep, dict(notes or {}), dict(unsafe or {}), set(weight_only))
    _walk(r)
    return r
