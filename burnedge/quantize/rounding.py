"""How far a graph's outputs move when its float arithmetic rounds differently: what `verify` must allow.

An int8 step is exact given its inputs, on every backend. But where a float layer (an LSTM kept float, a
LayerNorm) feeds a QuantizeLinear, two correct backends compute that float value in their own order, and a value
that lies next to a rounding boundary can land on either side: one int8 step apart, and every layer after it sees
the difference. `nudged(graph, rel)` is the graph with every such float value scaled by (1 + rel) before it is
quantized; running the reference on it and on the graph shows, for a given input, how much of an output is at the
mercy of that rounding. The same holds without int8 for a model whose float arithmetic is ill-conditioned (a
log of a power near float32's floor, a variance as E[x^2] - E[x]^2): there the reference run with float32 sums
(`ops.accumulating`) is a second float32 implementation. `second_opinions` are these runs; `spreads` how far each
output of each lands from the reference: the exporter records the largest per output ("rounding") and `verify`
allows what it shows (see burnedge.verifier).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..feeds import compare
from ..ir import Graph, Node, Value
from ..ops import accumulating, for_onnx

__all__ = ["NUDGES", "allowances", "boundaries", "nudged", "second_opinions", "spreads"]

NUDGES = (1e-6, -1e-6)  # relative nudges of the float values an int8 graph quantizes: about 8 float32 ulps


def boundaries(graph: Graph) -> list[str]:
    """Float tensors a QuantizeLinear reads that a float layer computed (not an input, a constant or a dequantize:
    those are the same bits on every backend)."""
    producers = {o: n for n in graph.nodes for o in n.outputs if o}
    out: list[str] = []
    for node in graph.nodes:
        if node.op_type != "QuantizeLinear" or not node.inputs:
            continue
        x = node.inputs[0]
        src = producers.get(x)
        if src is not None and src.op_type != "DequantizeLinear" and x not in out:
            out.append(x)
    return out


def nudged(graph: Graph, rel: float) -> Graph:
    """A copy of `graph` whose QuantizeLinear nodes read each float32 boundary tensor times (1 + rel)."""
    g = graph.copy()
    mul = for_onnx("Mul", 14)
    factor = np.array(1.0 + rel, np.float32)
    renamed: dict[str, str] = {}
    nodes: list[Node] = []
    nudge = {x for x in boundaries(graph) if graph.values[x].dtype == np.float32}
    for node in g.nodes:
        if node.op_type == "QuantizeLinear" and node.inputs and node.inputs[0] in nudge:
            x = node.inputs[0]
            if x not in renamed:
                k, y = f"{x}/nudge/factor", f"{x}/nudge"
                g.values[k] = Value(k, np.dtype(np.float32), (), factor)
                g.values[y] = Value(y, g.values[x].dtype, g.values[x].shape)
                nodes.append(Node(mul, f"{x}/nudge", [x, k], [y], {}))
                renamed[x] = y
            node.inputs = [renamed[x], *node.inputs[1:]]
        nodes.append(node)
    g.nodes = nodes
    return g


def allowances(graph: Graph, rounding: dict[str, float]) -> dict[str, dict[str, float]]:
    """What rounding alone explains, per output of `graph`, for the bundle's manifest: "step", the scale of an output
    dequantized from int8 by one per-tensor scale (a value one step apart), and "rounding", the most an output moved
    on the test vectors under `nudged` (measured by the exporter). `verifier.verify` allows them."""
    producers = {o: n for n in graph.nodes for o in n.outputs if o}
    out: dict[str, dict[str, float]] = {}
    for name in graph.outputs:
        row: dict[str, float] = {}
        node = producers.get(name)
        if node is not None and node.op_type == "DequantizeLinear":
            scale = graph.values[node.inputs[1]]
            if scale.is_const and scale.data.size == 1:
                row["step"] = float(scale.data.reshape(()))
        if rounding.get(name, 0.0) > 0:
            row["rounding"] = float(rounding[name])
        if row:
            out[name] = row
    return out


def second_opinions(graph: Graph, compile_reference: Callable[[Graph], Any]) -> list[tuple[Any, bool]]:
    """(executable, in float32) pairs: the graph's reference with float32 sums, and, where float layers feed int8
    ones, the reference of each `nudged` graph."""
    out = [(compile_reference(graph), True)]
    if boundaries(graph):
        out += [(compile_reference(nudged(graph, r)), False) for r in NUDGES]
    return out


def spreads(
    opinions: list[tuple[Any, bool]], feeds: Mapping[str, np.ndarray], refs: Mapping[str, np.ndarray]
) -> dict[str, float]:
    """The largest max-abs difference of each float output over `opinions` from the reference outputs `refs`."""
    out: dict[str, float] = {}
    for executable, in_float32 in opinions:
        if in_float32:
            with accumulating(np.float32):
                got = executable.run(feeds)
        else:
            got = executable.run(feeds)
        for name, arr in got.items():
            if np.asarray(arr).dtype.kind == "f" and np.asarray(refs[name]).dtype.kind == "f":
                diff = compare(np.asarray(arr), np.asarray(refs[name]))[0]
                if np.isfinite(diff):
                    out[name] = max(out.get(name, 0.0), diff)
    return out
