"""An If whose condition is known only at run time: each branch planned as a graph of its own, both over the If
step's scratch memory (only one of them runs, so the two share those bytes).

    arena | ... cond, tensors the branches read ... | If outputs | scratch of the If step                     |
                                                                 | then: its tensors, its kernels' scratch    |
                                                                 | else: its tensors, its kernels' scratch    |
                                                                 (both from the scratch's first byte)

1. `branch_graph`: a branch as a static Graph of its own. Its inputs are the enclosing graph's arena tensors it
   reads, which stay where the enclosing plan put them (`external`); the enclosing constants it reads are copied
   in; its nodes are typed, and nodes of constants folded, as the importer does for the main graph.
2. `plan_if`: each branch planned by `make_plan` (its tensors and its kernels' scratch); the If step's scratch is
   the larger of the two arenas. Each branch output must have the If output's shape and dtype: a static plan
   has one shape per tensor.
3. `placed`: a branch plan moved to the If step's scratch, its external tensors at the enclosing plan's offsets:
   what a backend lowers the branch's steps with. The If's outputs are copies of the chosen branch's outputs.

A Scan's body (`plan_scan`) is planned the same way, over the Scan step's scratch, with one difference: its
inputs (the state and one slice of each scan input, typed from the Scan's inputs) are tensors of its own plan,
which the backend fills before each iteration; only the values it reads from enclosing scopes are external.
Loop bodies are not planned here (a Loop the importer cannot unroll stays on the numpy backend).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from .. import limits
from ..errors import ModelError
from ..importers.onnx import infer_and_fold  # the importer's typing and folding, applied to one branch
from ..ir import Graph, Node, Value
from .arena import Plan, make_plan

__all__ = ["BRANCHES", "BranchPlans", "branch_graph", "placed", "plan_if", "plan_scan", "scan_body_graph"]

BRANCHES = ("then_branch", "else_branch")


@dataclass
class BranchPlans:
    """The plans of an If's two branches (`then`, `other`), each from offset 0 of the If step's scratch."""

    then: Plan
    other: Plan

    @property
    def arena_bytes(self) -> int:
        return max(self.then.arena_bytes, self.other.arena_bytes)


def branch_graph(graph: Graph, node: Node, attr: str) -> Graph:
    """Branch `attr` of If `node` (in `graph`) as a static Graph; its inputs are the tensors of `graph` that the If's
    branches read (node.captures), its constants those it has and those of `graph` it reads."""
    branch: Graph = node.attrs[attr]
    if branch.inputs:
        raise ModelError(f"node {node.name!r} (If): its {attr} declares inputs {branch.inputs}; If branches take none")
    reads = node.captures  # what either branch reads from enclosing scopes (the importer lists them)
    values = {n: graph.values[n] for n in reads}
    values.update((n, v) for n, v in branch.values.items() if v.is_const)
    inputs = [n for n in reads if not values[n].is_const]
    g = Graph(f"{node.name}/{attr}", inputs, list(branch.outputs), list(branch.nodes), values, graph.opset)
    with limits.counting_trips():
        infer_and_fold(g)
    g.prune()
    return g


def plan_if(graph: Graph, node: Node, scratch: Callable[[Graph, Node], int]) -> BranchPlans:
    """Plans both branches of If `node`; `scratch(branch, n)` gives the scratch bytes of a step of a branch."""
    plans = []
    for attr in BRANCHES:
        g = branch_graph(graph, node, attr)
        for k, (o, y) in enumerate(zip(g.outputs, node.outputs)):
            vo, vy = g.values[o], graph.values[y] if y else None
            if vy is not None and (vo.shape != vy.shape or vo.dtype != vy.dtype):
                raise ModelError(
                    f"node {node.name!r} (If): output {k} of its {attr} is {vo.dtype}{list(vo.shape)}, the If's "
                    f"{y!r} is {vy.dtype}{list(vy.shape)}: a static plan needs both branches to give one shape"
                )
        plans.append(make_plan(g, lambda n, g=g: scratch(g, n), external=frozenset(g.inputs)))
    return BranchPlans(*plans)


def placed(plan: Plan, base: int, outer: dict[str, int]) -> Plan:
    """`plan` (of a branch) moved to arena offset `base`; its external inputs at their `outer` offsets."""
    offsets = {n: outer[n] for n in plan.graph.inputs if n in outer}
    offsets.update((n, base + off) for n, off in plan.offsets.items())
    scratch = {s: (base + off, size) for s, (off, size) in plan.scratch.items()}
    moved = [base + off for off in plan.buffer_offsets]
    return replace(plan, buffer_offsets=moved, offsets=offsets, scratch=scratch)


def scan_body_graph(graph: Graph, node: Node) -> Graph:
    """The body of Scan `node` (in `graph`) as a static Graph: its inputs are the body's own (the states shaped as
    the Scan's initial states, each scan input's slice shaped as that input without its scan axis; opset 8 drops
    the batch axis 0 too and scans axis 1), then the non-constant tensors of `graph` it reads (node.captures)."""
    body: Graph = node.attrs["body"]
    n_scan = int(node.attrs["num_scan_inputs"])
    batched = node.op.since < 9  # opset 8: inputs[0] is sequence_lens, axis 0 of every input a batch
    ins = node.inputs[1:] if batched else node.inputs
    n_states = len(ins) - n_scan
    axes = [0] * n_scan if batched else list(node.attrs.get("scan_input_axes") or [0] * n_scan)
    if len(body.inputs) != len(ins):
        raise ModelError(f"node {node.name!r} (Scan): its body takes {len(body.inputs)} inputs for {len(ins)}")
    values = {n: graph.values[n] for n in node.captures}
    values.update((n, v) for n, v in body.values.items() if v.is_const)
    for k, (b, x) in enumerate(zip(body.inputs, ins)):
        v = graph.values[x]
        shape = tuple(v.shape)[1:] if batched else tuple(v.shape)
        if k >= n_states:
            ax = axes[k - n_states] % len(shape)
            shape = shape[:ax] + shape[ax + 1 :]
        values[b] = Value(b, v.dtype, shape)
    inputs = list(body.inputs) + [n for n in node.captures if not values[n].is_const]
    g = Graph(f"{node.name}/body", inputs, list(body.outputs), list(body.nodes), values, graph.opset)
    infer_and_fold(g)
    g.prune()
    return g


def plan_scan(graph: Graph, node: Node, scratch: Callable[[Graph, Node], int]) -> Plan:
    """Plans the body of Scan `node` from offset 0 of the Scan step's scratch; its captures stay external."""
    g = scan_body_graph(graph, node)
    external = frozenset(n for n in g.inputs if n in node.captures)
    return make_plan(g, lambda n: scratch(g, n), external=external)
