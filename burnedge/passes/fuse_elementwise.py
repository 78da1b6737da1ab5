"""Elementwise fusion: every maximal chain of elementwise ops whose intermediates are read only inside it becomes
one `burnedge.Elementwise` node, which the C backend generates as one loop over the output's shape.

The fused node's `body` attribute is a Graph: its inputs are the chain's external tensor inputs (the node's inputs,
in the same order and under the same names), its constants are the one-element constants of the chain (inlined,
so they become literals in C), its single output is the chain's output, and every body value has a Value with
dtype and shape. Larger constants stay external inputs. `origin` lists the fused ONNX nodes.

Which ops fuse is the registry's "fusable" tag (set where each op is registered in `burnedge/ops`). Rules: a node
joins the group of its readers when all of them are in one group, its output is no graph output, and its shape
broadcasts into the group's output shape (the loop runs over that shape; a smaller intermediate is recomputed per
output element). Groups are convex by construction: a member other than the root is read only by
members, so nothing outside depends on the inside except through the root, and the fused node can run where the
root ran. A CastLike of a constant is folded first (it is a constant of the target's type).

Steps: fold constant CastLikes; walk the nodes backwards, putting each fusable node in its readers' group or in a
new one; then replace each group of two or more nodes by one Elementwise node.
"""

from __future__ import annotations

from ..ir import Graph, Node, Value
from ..ops import for_onnx
from ._match import Rewriter, origin_of

DTYPES = frozenset("float32 int8 uint8 int16 uint16 int32 uint32 int64 uint64 bool".split())


def _fusable(graph: Graph, node: Node) -> bool:
    if node.op.domain or "fusable" not in node.op.tags or len(node.outputs) != 1 or not node.outputs[0]:
        return False
    if node.captures:
        return False
    return all(graph.values[n].dtype.name in DTYPES for n in [*node.inputs, node.outputs[0]] if n)


def _broadcasts_into(shape: tuple[int, ...], out: tuple[int, ...]) -> bool:
    if len(shape) > len(out):
        return False
    return all(d in (1, o) for d, o in zip(shape[::-1], out[::-1]))


class _Group:
    def __init__(self, root: Node):
        self.root = root
        self.members = [root]


def _body(graph: Graph, members: list[Node]) -> tuple[Graph, list[str]]:
    """The subgraph computing the group, and the node's inputs (the body's inputs, in first-use order)."""
    made = {m.outputs[0] for m in members}
    externals: list[str] = []
    values: dict[str, Value] = {}
    for m in members:
        for name in m.inputs:
            if not name or name in made or name in values:
                continue
            v = graph.values[name]
            if v.is_const and v.data.size == 1:
                values[name] = Value(name, v.dtype, v.shape, v.data)
            else:
                externals.append(name)
                values[name] = Value(name, v.dtype, v.shape)
    for m in members:
        v = graph.values[m.outputs[0]]
        values[m.outputs[0]] = Value(v.name, v.dtype, v.shape)
    root = members[-1]
    body = Graph(root.name, list(externals), [root.outputs[0]], list(members), values, graph.opset)
    return body, externals


def run(graph: Graph) -> Graph:
    rw = Rewriter(graph)
    group_of: dict[int, _Group] = {}
    groups: list[_Group] = []
    for node in reversed(graph.nodes):
        if not _fusable(graph, node):
            continue
        out = node.outputs[0]
        readers = rw.readers.get(out, [])
        owners = {id(group_of.get(id(r))) for r in readers}
        target = group_of.get(id(readers[0])) if readers and len(owners) == 1 else None
        if target is not None and out not in rw.outputs:
            if _broadcasts_into(graph.values[out].shape, graph.values[target.root.outputs[0]].shape):
                target.members.append(node)
                group_of[id(node)] = target
                continue
        g = _Group(node)
        groups.append(g)
        group_of[id(node)] = g
    opdef = for_onnx("Elementwise", 1, "burnedge")
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    for g in groups:
        if len(g.members) < 2:
            continue
        members = sorted(g.members, key=lambda n: position[id(n)])
        body, externals = _body(graph, members)
        fused = Node(opdef, g.root.name, externals, [g.root.outputs[0]], {"body": body}, origin=origin_of(members))
        rw.replace(members, fused, at=g.root)
    return rw.finish()
