"""Control flow that folds at import: an If on a constant condition is replaced by its branch, and a Loop with a
constant trip count whose condition stays true is unrolled into plain nodes.

Inner values are renamed `<node>/<iteration>/<name>` so copies never collide; nested subgraphs that capture a
renamed value are rewritten too.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir import Graph, Node, Value
from ..ops import for_onnx
from .bounds import MAX_UNROLL, Budget
from .loop_shapes import counts_trips

__all__ = ["MAX_UNROLL", "inline_if", "splice_as", "unroll_loop"]


def _rename_graph(g: Graph, mapping: dict[str, str]) -> Graph:
    """A copy of subgraph `g` whose reads of outer names follow `mapping` (names it defines shadow them)."""
    inner = set(g.inputs) | set(g.values) | {o for n in g.nodes for o in n.outputs}
    outer_map = {k: v for k, v in mapping.items() if k not in inner}
    if not outer_map:
        return g
    nodes = [_copy_node(n, outer_map, lambda s: s, n.name) for n in g.nodes]
    return replace(g, nodes=nodes, outputs=[outer_map.get(o, o) for o in g.outputs])


def _copy_node(node: Node, mapping: dict[str, str], fresh, name: str) -> Node:
    attrs = {}
    for k, v in node.attrs.items():
        if isinstance(v, Graph):
            v = _rename_graph(v, mapping)
        elif isinstance(v, list) and v and isinstance(v[0], Graph):
            v = [_rename_graph(x, mapping) for x in v]
        attrs[k] = v
    outputs = [fresh(o) if o else "" for o in node.outputs]
    for old, new in zip(node.outputs, outputs):
        if old:
            mapping[old] = new
    return Node(
        node.op,
        name,
        [mapping.get(i, i) if i else "" for i in node.inputs],
        outputs,
        attrs,
        [mapping.get(c, c) for c in node.captures],
    )


def _splice(
    body: Graph, graph: Graph, prefix: str, mapping: dict[str, str], keep: frozenset[str] = frozenset()
) -> list[Node]:
    """Copies `body`'s nodes into `graph` under `prefix`; `mapping` starts with the body inputs' new names. Values
    named in `keep` keep their names (they are the outer graph's own)."""

    def fresh(name: str) -> str:
        return name if name in keep else f"{prefix}/{name}"

    for name, v in body.values.items():
        if v.is_const and name not in mapping:
            mapping[name] = fresh(name)
            graph.values[fresh(name)] = Value(fresh(name), v.dtype, v.shape, v.data)
    return [_copy_node(n, mapping, fresh, fresh(n.name)) for n in body.nodes]


def _identity(src: str, dst: str, name: str) -> Node:
    return Node(for_onnx("Identity", 1), name, [src], [dst])


def splice_as(body: Graph, graph: Graph, prefix: str, outputs: list[str]) -> list[Node]:
    """The nodes of `body` (a graph whose inputs and outputs carry the outer names: a node's function body) to put in
    a node's place in `graph`: inner values under `prefix`, `outputs` ("" for an omitted one) written as named."""
    mapping = {n: n for n in body.inputs}
    made = {o for n in body.nodes for o in n.outputs}
    nodes = _splice(body, graph, prefix, mapping, frozenset(o for o in outputs if o in made))
    for old in made:  # typed by the body's import, as the outer graph's values must be
        if old:
            v = body.values[old]
            graph.values[mapping[old]] = Value(mapping[old], v.dtype, v.shape, v.data)
    for out in outputs:
        if not out or out in made:
            continue
        v = body.values[out]
        if v.is_const:  # folded at import: the node's output is a constant now
            graph.values[out] = Value(out, v.dtype, v.shape, v.data)
        else:
            nodes.append(_identity(mapping.get(out, out), out, f"{prefix}/out/{out}"))
    return nodes


def inline_if(node: Node, cond: bool, graph: Graph) -> list[Node]:
    """The nodes that replace an If whose condition is the constant `cond`."""
    branch: Graph = node.attrs["then_branch" if cond else "else_branch"]
    mapping: dict[str, str] = {}
    nodes = _splice(branch, graph, node.name, mapping)
    for out, dst in zip(branch.outputs, node.outputs):
        if dst:
            nodes.append(_identity(mapping.get(out, out), dst, f"{node.name}/out/{dst}"))
    return nodes


def unroll_loop(node: Node, graph: Graph, budget: Budget) -> list[Node] | None:
    """The nodes that replace a Loop, or None when it cannot be unrolled.

    Unrolls when the trip count is a constant (at most MAX_UNROLL), the initial condition is absent or a constant
    true, and the body passes its condition through unchanged (or makes it a constant true): a `for` loop. The
    trips and the nodes they add count against `budget` (a LimitError past max_unrolled_trips or max_nodes).
    """
    body: Graph = node.attrs["body"]
    m_name, c_name = (node.inputs + ["", ""])[:2]
    if not m_name or not graph.values[m_name].is_const:
        return None
    trips = int(np.asarray(graph.values[m_name].data).reshape(()))
    if not 0 < trips <= MAX_UNROLL:
        return None
    if c_name and not (graph.values[c_name].is_const and bool(np.asarray(graph.values[c_name].data).all())):
        return None
    if not counts_trips(body):
        return None
    budget.unroll(node, trips, body)
    cond_in = body.inputs[1]
    n_carried = len(node.inputs) - 2
    carried = node.inputs[2:]
    true_name = f"{node.name}/true"
    graph.values[true_name] = Value(true_name, np.dtype(bool), (), np.array(True))
    nodes: list[Node] = []
    scans: list[list[str]] = [[] for _ in body.outputs[1 + n_carried :]]
    for i in range(trips):
        it = f"{node.name}/{i}/iter"
        graph.values[it] = Value(it, np.dtype(np.int64), (), np.array(i, np.int64))
        mapping = {body.inputs[0]: it, cond_in: true_name}
        mapping.update({b: c for b, c in zip(body.inputs[2:], carried)})
        nodes += _splice(body, graph, f"{node.name}/{i}", mapping)
        carried = [mapping.get(o, o) for o in body.outputs[1 : 1 + n_carried]]
        for k, o in enumerate(body.outputs[1 + n_carried :]):
            scans[k].append(mapping.get(o, o))
    for src, dst in zip(carried, node.outputs[:n_carried]):
        if dst:
            nodes.append(_identity(src, dst, f"{node.name}/out/{dst}"))
    axes = f"{node.name}/axes0"
    graph.values[axes] = Value(axes, np.dtype(np.int64), (1,), np.array([0], np.int64))
    for k, (parts, dst) in enumerate(zip(scans, node.outputs[n_carried:])):
        if not dst:
            continue
        stacked = [f"{node.name}/scan{k}/{i}" for i in range(len(parts))]
        for i, (p, s) in enumerate(zip(parts, stacked)):
            nodes.append(Node(for_onnx("Unsqueeze", 13), f"{node.name}/scan{k}/unsqueeze{i}", [p, axes], [s]))
        nodes.append(Node(for_onnx("Concat", 13), f"{node.name}/scan{k}/concat", stacked, [dst], {"axis": 0}))
    return nodes
