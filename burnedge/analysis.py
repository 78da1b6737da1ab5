"""Model statistics for `burnedge inspect`: op histogram, parameter count, MACs per op type, unsupported ops."""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import onnx

from .ir import Graph, Node
from .ops import for_onnx

__all__ = ["Stored", "Summary", "macs", "stored", "summarize", "unsupported_ops"]


def _shape(g: Graph, name: str) -> tuple[int, ...]:
    return g.values[name].shape if name else ()


def _conv(g: Graph, n: Node) -> int:
    w = _shape(g, n.inputs[1])  # (M, C/group, k...)
    return int(np.prod(_shape(g, n.outputs[0]))) * int(np.prod(w[1:]))


def _conv_transpose(g: Graph, n: Node) -> int:
    w = _shape(g, n.inputs[1])  # (C, M/group, k...)
    return int(np.prod(_shape(g, n.inputs[0]))) * int(np.prod(w[1:]))


def _matmul(g: Graph, n: Node) -> int:
    a = _shape(g, n.inputs[0])
    return int(np.prod(_shape(g, n.outputs[0]))) * (a[-1] if a else 1)


def _gemm(g: Graph, n: Node) -> int:
    a = _shape(g, n.inputs[0])
    k = a[0] if n.attrs.get("transA", 0) else a[-1]
    return int(np.prod(_shape(g, n.outputs[0]))) * k


def _recurrent(gates: int) -> Callable[[Graph, Node], int]:
    def count(g: Graph, n: Node) -> int:
        x, w, r = (_shape(g, i) for i in n.inputs[:3])  # X (T, B, I) or (B, T, I); W (D, G*H, I); R (D, G*H, H)
        steps = x[1] if n.attrs.get("layout", 0) else x[0]
        batch = x[0] if n.attrs.get("layout", 0) else x[1]
        return steps * batch * w[0] * w[1] * (w[2] + r[2]) if gates else 0

    return count


MACS: dict[str, Callable[[Graph, Node], int]] = {
    "Conv": _conv,
    "ConvInteger": _conv,
    "ConvTranspose": _conv_transpose,
    "MatMul": _matmul,
    "MatMulInteger": _matmul,
    "Gemm": _gemm,
    "LSTM": _recurrent(4),
    "GRU": _recurrent(3),
    "RNN": _recurrent(1),
}


def macs(graph: Graph, node: Node) -> int:
    """Multiply-accumulates of one node; 0 for ops that are not dense arithmetic."""
    fn = MACS.get(node.op_type)
    return fn(graph, node) if fn else 0


@dataclass
class Summary:
    ops: dict[str, int] = field(default_factory=dict)
    macs: dict[str, int] = field(default_factory=dict)
    parameters: int = 0
    parameter_bytes: int = 0


def summarize(graph: Graph) -> Summary:
    s = Summary()
    hist: collections.Counter[str] = collections.Counter(n.op_type for n in graph.nodes)
    s.ops = dict(hist.most_common())
    per: collections.Counter[str] = collections.Counter()
    for n in graph.nodes:
        m = macs(graph, n)
        if m:
            per[n.op_type] += m
    s.macs = dict(per.most_common())
    for v in graph.values.values():
        if v.is_const and v.data is not None and v.data.dtype != object:
            s.parameters += v.data.size
            s.parameter_bytes += v.data.nbytes
    return s


def unsupported_ops(model: onnx.ModelProto) -> dict[str, list[str]]:
    """Op types of `model` (and its subgraphs) that burnedge lacks at the model's opset -> node names."""
    opsets = {("" if o.domain in ("", "ai.onnx") else o.domain): o.version for o in model.opset_import}
    local = {(f.domain, f.name) for f in model.functions}
    out: dict[str, list[str]] = {}

    def walk(nodes) -> None:
        for i, n in enumerate(nodes):
            dom = "" if n.domain in ("", "ai.onnx") else n.domain
            if (n.domain, n.op_type) not in local and for_onnx(n.op_type, opsets.get(dom, 0), dom) is None:
                out.setdefault(f"{dom + '.' if dom else ''}{n.op_type}", []).append(n.name or f"{n.op_type}_{i}")
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g.node)
                for sub in a.graphs:
                    walk(sub.node)

    walk(model.graph.node)
    for f in model.functions:
        walk(f.node)
    return out


@dataclass
class Stored:
    """What an .onnx file says about itself before any shape is fixed (for `inspect` of a dynamic model)."""

    inputs: list[tuple[str, str, list[int | str]]]  # (name, dtype, dims: a number, a dim_param name or "?")
    outputs: list[tuple[str, str, list[int | str]]]
    ops: dict[str, int]
    parameters: int
    parameter_bytes: int
    dynamic: dict[str, list[int]]  # input -> the axes that are not fixed numbers


def _dims(vi: onnx.ValueInfoProto) -> list[int | str]:
    dims: list[int | str] = []
    for d in vi.type.tensor_type.shape.dim:
        dims.append(d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else (d.dim_param or "?"))
    return dims


def _dtype(vi: onnx.ValueInfoProto) -> str:
    elem = vi.type.tensor_type.elem_type
    return str(onnx.helper.tensor_dtype_to_np_dtype(elem)) if elem else "?"


def _stored_tensors(model: onnx.ModelProto) -> list[onnx.TensorProto]:
    """The initializers and the Constant nodes' tensors of `model`, its subgraphs' included."""
    out: list[onnx.TensorProto] = []

    def walk(g: onnx.GraphProto) -> None:
        out.extend(g.initializer)
        for n in g.node:
            for a in n.attribute:
                if n.op_type == "Constant" and a.name == "value":
                    out.append(a.t)
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                for sub in a.graphs:
                    walk(sub)

    walk(model.graph)
    return out


def stored(model: onnx.ModelProto) -> Stored:
    """Inputs, outputs, op histogram and parameter count of `model` as stored (sizes from the initializers' dims,
    so no weight is read)."""
    g = model.graph
    inits = {i.name for i in g.initializer}
    ins = [(vi.name, _dtype(vi), _dims(vi)) for vi in g.input if vi.name not in inits]
    outs = [(vi.name, _dtype(vi), _dims(vi)) for vi in g.output]
    hist: collections.Counter[str] = collections.Counter(n.op_type for n in g.node)
    params = nbytes = 0
    for t in _stored_tensors(model):
        size = int(np.prod(t.dims, dtype=np.int64))
        params += size
        nbytes += size * onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
    dynamic = {name: [i for i, d in enumerate(dims) if not isinstance(d, int)] for name, _, dims in ins}
    return Stored(ins, outs, dict(hist.most_common()), params, nbytes, {k: v for k, v in dynamic.items() if v})
