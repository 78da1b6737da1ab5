"""Splitting fused nodes to the granularity of the int8 ops, so calibration measures every tensor an int8 op writes.

The optimiser fuses ``act(conv(x, w) + b + R)`` into one FusedConv (likewise FusedGemm, FusedMatMul). int8 has no
op with a residual input, and folds only Relu and Clip into a producer's clamp, so a fused node with a residual
or another activation becomes, in float:

    Fused*(x, w, b)            (no residual, no activation)  -> y
    Add(y, R)                  (when there is a residual)    -> s
    <activation>(s)            (when it is not the identity) -> the fused node's output

A fused node without residual whose activation is Relu, Clip or none stays as it is: its output range is already
the clamped one. The new tensors get names derived from the node's output ("<out>/pre", "<out>/sum"), the
activation becomes the matching ONNX node (Relu, Clip with constant bounds, LeakyRelu, HardSigmoid, HardSwish,
Sigmoid, Tanh, Gelu), and every piece keeps the fused node's name prefix and `origin` for the report.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Node, Value
from ..ops import for_onnx

__all__ = ["CLAMPS", "activation_node", "split_fused"]

FUSED = ("FusedConv", "FusedGemm", "FusedMatMul")
CLAMPS = ("", "Relu", "Clip")  # activations an int8 producer applies through its clamp
_OPSET = 20  # the ONNX opset whose activation ops the split nodes use (Gelu arrived in 20)


def _fresh(graph: Graph, base: str) -> str:
    name, k = base, 1
    while name in graph.values:
        name, k = f"{base}_{k}", k + 1
    return name


def activation_node(graph: Graph, name: str, activation: str, params: list[float], x: str, y: str) -> Node:
    """The ONNX node applying a fused epilogue `activation` to `x`, writing `y` (adds Clip's bound constants)."""
    inputs, attrs = [x], {}
    if activation == "Clip":
        for bound, value in zip(("min", "max"), params):
            c = _fresh(graph, f"{name}/{bound}")
            graph.values[c] = Value(c, np.dtype(np.float32), (), np.array(value, np.float32))
            inputs.append(c)
    elif activation == "LeakyRelu":
        attrs = {"alpha": float(params[0])}
    elif activation == "HardSigmoid":
        attrs = {"alpha": float(params[0]), "beta": float(params[1])}
    elif activation == "Gelu":
        attrs = {"approximate": "none"}
    op = for_onnx(activation, _OPSET)
    if op is None:  # every epilogue activation has an ONNX op; a new one must be listed above
        raise ValueError(f"no ONNX op for the epilogue activation {activation!r}")
    return Node(op, name, inputs, [y], attrs)


def _split(graph: Graph, node: Node) -> list[Node]:
    activation = node.attrs.get("activation", "")
    params = list(node.attrs.get("activation_params", ()))
    residual = node.inputs[3] if len(node.inputs) > 3 else ""
    if not residual and activation in CLAMPS:
        return [node]
    out = node.outputs[0]
    v = graph.values[out]
    head = Node(
        node.op,
        node.name,
        list(node.inputs[:3]),
        [_fresh(graph, f"{out}/pre")],
        {**node.attrs, "activation": "", "activation_params": []},
        origin=node.onnx_ops[:1] if node.origin else [],
    )
    while head.inputs and not head.inputs[-1]:
        head.inputs.pop()
    graph.values[head.outputs[0]] = Value(head.outputs[0], v.dtype, v.shape)
    nodes, cur = [head], head.outputs[0]
    if residual:
        add_out = out if not activation else _fresh(graph, f"{out}/sum")
        if add_out != out:
            graph.values[add_out] = Value(add_out, v.dtype, v.shape)
        add = Node(for_onnx("Add", _OPSET), f"{node.name}/residual", [cur, residual], [add_out])
        nodes.append(add)
        cur = add_out
    if activation:
        nodes.append(activation_node(graph, f"{node.name}/{activation}", activation, params, cur, out))
    return nodes


def split_fused(graph: Graph) -> Graph:
    """Splits (in place) every fused node with a residual or a non-clamp activation; returns the graph."""
    nodes: list[Node] = []
    for node in graph.nodes:
        if node.op.domain == "burnedge" and node.op_type in FUSED:
            nodes.extend(_split(graph, node))
        else:
            nodes.append(node)
    graph.nodes = nodes
    graph.verify()
    return graph
