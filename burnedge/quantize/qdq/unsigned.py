"""uint8 activations -> int8 in a QDQ graph, where that is exact (onnxruntime's default uint8 QDQ models).

Who owns what: `signed_activations` rewrites the graph in place (zero points and the dtype of the uint8 values it
converts); nothing else here writes.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir import Graph, Node, Value

__all__ = ["signed_activations"]

_I8 = np.dtype(np.int8)
_U8 = np.dtype(np.uint8)

# -- uint8 activations -> int8 ------------------------------------------------------------------------------------
# (op type) -> index of the zero point belonging to the input at each index, for nodes that read a quantized value
_READ_ZP = {"DequantizeLinear": {0: 2}, "QLinearConv": {0: 2}, "QLinearMatMul": {0: 2, 3: 5}}
# (op type) -> index of the zero point of the output, for nodes that write one
_WRITE_ZP = {"QuantizeLinear": 2, "QLinearConv": 7, "QLinearMatMul": 7}


def _zp_of(graph: Graph, node: Node, index: int, value_dtype: np.dtype) -> int | None:
    """The scalar uint8 zero point at input `index` (missing: 0), None when it is not one constant."""
    name = node.inputs[index] if index < len(node.inputs) else ""
    if not name:
        return 0 if value_dtype == _U8 else None
    arr = graph.values[name].data
    if arr is None or arr.size != 1 or arr.dtype != _U8:
        return None
    return int(arr.reshape(-1)[0])


def _with_zp(graph: Graph, node: Node, index: int, zp: int) -> Node:
    name = f"{node.name or node.op_type}/zero_point_s8"
    k = 1
    while name in graph.values:
        name, k = f"{node.name or node.op_type}/zero_point_s8_{k}", k + 1
    arr = np.array(zp - 128, np.int8)
    graph.values[name] = Value(name, arr.dtype, (), arr)
    ins = list(node.inputs) + [""] * (index + 1 - len(node.inputs))
    ins[index] = name
    attrs = dict(node.attrs)
    if node.op_type == "QuantizeLinear" and attrs.get("output_dtype"):
        attrs.pop("output_dtype")  # the zero point's type names the output type
    return dataclasses.replace(node, inputs=ins, attrs=attrs)


def signed_activations(graph: Graph) -> int:
    """Turns uint8 activations into int8 ones where that is exact; returns how many values changed.

    A uint8 value written by QuantizeLinear / QLinearConv / QLinearMatMul and read only by DequantizeLinear /
    QLinearConv / QLinearMatMul (as a quantized operand) is exactly the int8 value ``q - 128`` under zero point
    ``zp - 128``: ``clamp(round(x / s) + zp, 0, 255) - 128 == clamp(round(x / s) + zp - 128, -128, 127)`` and
    ``(q - zp) * s`` is unchanged. So the writer and every reader get the shifted zero point and the value becomes
    int8. Graph inputs and outputs keep their type.
    """
    readers = graph.consumers()
    index = {id(n): i for i, n in enumerate(graph.nodes)}
    changed = 0
    for node in list(graph.nodes):
        node = graph.nodes[index[id(node)]] if id(node) in index else node
        zi = _WRITE_ZP.get(node.op_type)
        if zi is None or node.op.domain or not node.outputs or not node.outputs[0]:
            continue
        out = node.outputs[0]
        v = graph.values[out]
        if v.dtype != _U8 or out in graph.outputs:
            continue
        zp = _zp_of(graph, node, zi, v.dtype)
        plan: list[tuple[Node, int, int]] = [] if zp is None else [(node, zi, zp)]
        for r in readers.get(out, []) if zp is not None else []:
            slots = [i for i, n in enumerate(r.inputs) if n == out]
            zmap = _READ_ZP.get(r.op_type, {}) if not r.op.domain else {}
            if len(slots) != 1 or slots[0] not in zmap or out in r.captures:
                plan = []
                break
            rz = _zp_of(graph, r, zmap[slots[0]], v.dtype)
            if rz is None:
                plan = []
                break
            plan.append((r, zmap[slots[0]], rz))
        if not plan:
            continue
        for n, zi2, z in plan:
            k = next(i for i, m in enumerate(graph.nodes) if m is n)
            new = _with_zp(graph, graph.nodes[k], zi2, z)
            graph.nodes[k] = new
            index[id(new)] = k
            for name in new.uses():  # keep the reader lists pointing at the live node
                lst = readers.get(name, [])
                readers[name] = [new if m is n else m for m in lst]
        graph.values[out] = Value(out, _I8, v.shape)
        changed += 1
    return changed
