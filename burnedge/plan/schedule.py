"""Tensor lifetimes over the node order, with the aliases that let two tensors share bytes.

Two kinds of alias:
- a view (Reshape, Flatten, Squeeze, Unsqueeze, Identity, inference Dropout): the output is the input's bytes,
  always;
- in place: an elementwise step may write its output over an input of the same size whose bytes die at that
  step (nothing reads them later, views included).

Aliased tensors form one buffer whose lifetime spans all of theirs. Scratch memory a kernel asks for is a buffer
alive during its own step only. Tensors named `external` live elsewhere (an If branch reads its enclosing plan's
tensors where that plan put them): they get no buffer, and nothing is aliased onto them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..ir import Graph, Node

__all__ = ["Buffer", "lifetimes"]


@dataclass
class Buffer:
    """Bytes in the arena: size, the step that writes them first, the step that reads them last (inclusive).

    Graph inputs are written at step -1 (before the first node); graph outputs live until step len(nodes).
    `tensors` are the tensor names sharing these bytes (the first is the root); a scratch buffer has none and
    names its step in `scratch_of`.
    """

    size: int
    first: int
    last: int
    tensors: list[str] = field(default_factory=list)
    scratch_of: int | None = None


def _in_arena(graph: Graph, name: str, external: frozenset[str] = frozenset()) -> bool:
    v = graph.values[name]
    return not v.is_const and v.dtype != object and name not in external


def _is_view(node: Node) -> bool:
    return "view" in node.op.tags and len([o for o in node.outputs if o]) == 1 and bool(node.inputs[0])


def lifetimes(
    graph: Graph,
    scratch: Callable[[Node], int] | None = None,
    in_place: bool = True,
    external: frozenset[str] = frozenset(),
    reads: Mapping[int, Sequence[str]] | None = None,
) -> list[Buffer]:
    """Buffers for every arena tensor of `graph` (constants and object tensors live elsewhere), plus scratch.
    `reads` names tensors a step reads besides its node's inputs (a backend's kernel that recomputes an earlier
    step's output from that step's inputs): they live until then.

    Steps: walk the nodes in order; a view joins its input's buffer; an elementwise output joins the buffer of a
    same-size input whose last reader is this step; any other output opens a buffer. Then extend each buffer to
    the last read of any of its tensors.
    """
    end = len(graph.nodes)
    last_use: dict[str, int] = {}
    for step, node in enumerate(graph.nodes):
        for n in [*node.uses(), *(reads or {}).get(step, ())]:
            last_use[n] = step
    for n in graph.outputs:
        last_use[n] = end
    owner: dict[str, Buffer] = {}
    buffers: list[Buffer] = []
    outputs = set(graph.outputs)
    holds_output: set[int] = set()  # id() of the buffers holding a graph output (kept as a set: a chain of 20,000
    # in-place steps shares one buffer, and scanning its tensors at every step was quadratic)

    def open_buffer(name: str, step: int) -> None:
        b = Buffer(graph.values[name].nbytes, step, max(step, last_use.get(name, step)), [name])
        owner[name] = b
        buffers.append(b)
        if name in outputs:
            holds_output.add(id(b))

    for name in graph.inputs:
        if _in_arena(graph, name, external):
            open_buffer(name, -1)
    for step, node in enumerate(graph.nodes):
        for out in node.outputs:
            if not out or not _in_arena(graph, out, external):
                continue
            base = _alias_target(graph, node, out, owner, step, holds_output) if in_place or _is_view(node) else None
            if base is not None:
                base.tensors.append(out)
                if out in outputs:
                    holds_output.add(id(base))
                base.last = max(base.last, last_use.get(out, step))
                owner[out] = base
            else:
                open_buffer(out, step)
        need = scratch(node) if scratch else 0
        if need:
            buffers.append(Buffer(need, step, step, [], scratch_of=step))
    return buffers


def _alias_target(
    graph: Graph, node: Node, out: str, owner: dict[str, Buffer], step: int, holds_output: set[int]
) -> Buffer | None:
    vo = graph.values[out]
    if _is_view(node):
        src = node.inputs[0]
        return owner.get(src) if src in owner and graph.values[src].nbytes == vo.nbytes else None
    if "elementwise" not in node.op.tags or out != node.outputs[0]:
        return None
    for src in node.inputs:
        b = owner.get(src) if src else None
        v = graph.values[src] if src else None
        if b is None or v is None or v.shape != vo.shape or v.dtype.itemsize != vo.dtype.itemsize:
            continue
        if b.last == step and id(b) not in holds_output:
            return b
    return None
