"""The int8 interface of a quantized graph, for microcontrollers: a graph input that only a QuantizeLinear reads
becomes that node's int8 tensor, and a graph output a DequantizeLinear writes becomes its int8 input.

Why: on a microcontroller a float input and output buffer cost 4 bytes an element (2 x 2,560 B for the MLPerf Tiny
autoencoder, more than its whole int8 arena), and the sensor or the application works in int8 anyway. The caller
quantizes with the scale and zero point the bundle's manifest (and a firmware's model.h) gives, by the same rule as
the QuantizeLinear removed here; `Interface.quantize` is that rule on the host (the numpy reference of the node).

Only per-tensor int8 / uint8 quantization is moved out; any other input or output is left as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..ir import Graph, Node, Value
from ..ops._eval import run_graph

__all__ = ["Interface", "int8_interface"]


@dataclass
class Interface:
    """What `int8_interface` moved out: per input and output name, its quantization (scale, zero_point, dtype),
    and the removed QuantizeLinear nodes, to quantize float feeds on the host."""

    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    quantizer: Graph | None = None  # float inputs -> their int8 forms (the removed nodes)

    def quantize(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Float feeds -> the graph's int8 inputs, by the removed QuantizeLinear nodes themselves."""
        out = dict(feeds)
        q = self.quantizer
        if q is not None and q.inputs:
            for name, value in zip(q.inputs, run_graph(q, [np.asarray(feeds[n]) for n in q.inputs], {})):
                out[name] = value
        return out


def _per_tensor(graph: Graph, node: Node) -> dict[str, Any] | None:
    """scale, zero point and dtype of a per-tensor int8 / uint8 Q or DQ node with constant parameters."""
    scale = graph.values[node.inputs[1]].data if len(node.inputs) > 1 else None
    zp = graph.values[node.inputs[2]].data if len(node.inputs) > 2 and node.inputs[2] else None
    if scale is None or scale.size != 1 or zp is None or zp.size != 1 or zp.dtype.name not in ("int8", "uint8"):
        return None
    return {"scale": float(scale.reshape(-1)[0]), "zero_point": int(zp.reshape(-1)[0]), "dtype": zp.dtype.name}


def _rename(graph: Graph, old: str, new: str) -> None:
    for node in graph.nodes:
        node.inputs = [new if n == old else n for n in node.inputs]
        node.outputs = [new if n == old else n for n in node.outputs]
        node.captures = [new if n == old else n for n in node.captures]
    v = graph.values.pop(old)
    v.name = new
    graph.values[new] = v


def int8_interface(graph: Graph) -> Interface:
    """Rewrites `graph` in place (module docstring); returns what moved out."""
    consumers, producers = graph.consumers(), graph.producers()
    found = Interface()
    removed: list[Node] = []
    for name in list(graph.inputs):
        readers = consumers.get(name, [])
        q = readers[0] if len(readers) == 1 and readers[0].op_type == "QuantizeLinear" else None
        qp = _per_tensor(graph, q) if q is not None and q.inputs[0] == name else None
        if qp is None or q.outputs[0] in graph.outputs:
            continue
        graph.nodes.remove(q)
        removed.append(q)
        float_value = graph.values.pop(name)
        _rename(graph, q.outputs[0], name)
        found.inputs[name] = qp
        graph.values[f"{name}/float"] = float_value  # for the quantizer graph below; pruned from `graph`
    for name in list(graph.outputs):
        dq = producers.get(name)
        if dq is None or dq.op_type != "DequantizeLinear" or dq.inputs[0] in graph.inputs:
            continue
        qp = _per_tensor(graph, dq)
        if qp is None or graph.outputs.count(name) > 1 or dq.inputs[0] in graph.outputs:
            continue
        graph.nodes.remove(dq)
        graph.values.pop(name)
        _rename(graph, dq.inputs[0], name)
        found.outputs[name] = qp
    if removed:
        values = {}
        for q in removed:
            src = graph.values.pop(f"{q.inputs[0]}/float")
            values[q.inputs[0]] = src
            values.update({n: graph.values[n] for n in q.inputs[1:] if n})
            int8 = graph.values[q.inputs[0]]
            values[q.outputs[0] + "/int8"] = Value(q.outputs[0] + "/int8", int8.dtype, int8.shape)
        nodes = [Node(q.op, q.name, list(q.inputs), [q.outputs[0] + "/int8"], dict(q.attrs)) for q in removed]
        found.quantizer = Graph("quantizer", [q.inputs[0] for q in removed], [n.outputs[0] for n in nodes], nodes,
                                values, graph.opset)  # fmt: skip
        graph.prune()
    return found
