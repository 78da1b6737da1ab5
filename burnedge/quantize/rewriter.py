"""The state of one int8 rewrite: the source graph, the graph being built, and the two forms of every value.

The rules (`rules/`) read and extend it; the walk over the nodes is `rewrite.py`. What it records is what the report
needs: which int8 tensor stands for which float tensor, its QParams, and why each float node stayed float.

Every source value has up to two forms in the new graph: a float tensor and an int8 tensor with QParams. A node
asks for the form it needs; a missing form is made on demand and cached:

- int8 from float: a QuantizeLinear with the tensor's calibrated activation qparams (a constant is quantized
  directly, no node);
- float from int8: a DequantizeLinear with the int8 tensor's qparams.

Graph inputs and outputs keep their float names and types: a quantized output is written under a new name and
dequantized into the output's own name. Nothing here depends on dict or set iteration order beyond insertion, so
the same inputs give the same graph.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..dtypes import is_float
from ..ir import Graph, Node, Value
from ..ops import OpDef, for_onnx
from .qparams import QParams, activation_qparams, quantize

__all__ = ["INT8", "Decision", "Rewrite", "burnedge_op"]

INT8 = np.dtype(np.int8)
_QDQ_OPSET = 19  # QuantizeLinear 19 / DequantizeLinear 13: per-tensor, int8 zero point


@dataclass(frozen=True)
class Decision:
    """What became of one source node: the int8 op that runs it, or None and why it stayed float."""

    node: str
    op: str
    int8_op: str | None
    reason: str = ""


def burnedge_op(name: str) -> OpDef:
    op = for_onnx(name, 1, "burnedge")
    if op is None:
        raise RuntimeError(f"the int8 op burnedge.{name} is not registered")
    return op


@dataclass
class Rewrite:
    """The state of one rewrite: the source graph, the graph being built, and the two forms of every value."""

    src: Graph
    ranges: Mapping[str, tuple[float, float]]
    keep: Set[str] = frozenset()
    notes: Mapping[str, str] = field(default_factory=dict)  # node name -> why the user or `auto` kept it float
    unsafe: Mapping[str, str] = field(default_factory=dict)  # tensor -> why its range is unusable (a mask's -inf)
    weight_only: Set[str] = frozenset()  # kept nodes whose constant weights become int8 levels (rules.weight_only)

    def __post_init__(self) -> None:
        s = self.src
        self.out = Graph(s.name, list(s.inputs), list(s.outputs), [], {}, s.opset)
        for name, v in s.values.items():
            if v.is_const or name in s.inputs:
                self.out.values[name] = Value(v.name, v.dtype, v.shape, v.data)
        self.fname: dict[str, str] = {n: n for n in s.values if s.values[n].is_const or n in s.inputs}
        self.q: dict[str, tuple[str, QParams]] = {}
        self.qparams: dict[str, QParams] = {}  # int8 tensor of the new graph -> its parameters
        self.readers = s.consumers()
        self.producer = s.producers()
        self.absorbed: set[int] = set()
        self.decisions: list[Decision] = []
        self.layers: dict[str, tuple[str, str]] = {}  # source tensor -> (node, op that now computes it)
        self._aqp: dict[str, QParams] = {}

    # -- queries --------------------------------------------------------------------------------------------------
    def const(self, name: str) -> np.ndarray | None:
        return self.src.values[name].data if name else None

    def value(self, name: str) -> Value:
        return self.src.values[name]

    def is_activation(self, name: str) -> bool:
        """A float tensor computed at run time (not a constant, not an omitted input)."""
        return bool(name) and not self.src.values[name].is_const and is_float(self.src.values[name].dtype)

    def has_int8(self, name: str) -> bool:
        return name in self.q

    def has_range(self, name: str) -> bool:
        return name in self.ranges and name not in self.unsafe

    def act_qp(self, name: str) -> QParams:
        """The activation qparams of a float tensor, from its calibrated range."""
        if name not in self._aqp:
            self._aqp[name] = activation_qparams(*self.ranges[name])
        return self._aqp[name]

    def int8_qp(self, name: str) -> QParams:
        """The qparams of the int8 form of activation `name`, made or to be made by `int8` (emits nothing)."""
        return self.q[name][1] if name in self.q else self.act_qp(name)

    def sole_reader(self, name: str) -> Node | None:
        if name in self.src.outputs:
            return None
        readers = self.readers.get(name, [])
        return readers[0] if len(readers) == 1 else None

    # -- making names and nodes -----------------------------------------------------------------------------------
    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.out.values or (name in self.src.values and name != base):
            name, k = f"{base}_{k}", k + 1
        return name

    def add_const(self, base: str, arr: np.ndarray) -> str:
        name = self.fresh(base)
        arr = np.ascontiguousarray(arr)
        self.out.values[name] = Value(name, arr.dtype, tuple(arr.shape), arr)
        return name

    def emit(
        self,
        op: OpDef,
        name: str,
        inputs: list[str],
        outputs: list[tuple[str, np.dtype, tuple[int, ...]]],
        attrs: dict[str, Any] | None = None,
        origin: list[tuple[str, str]] | None = None,
    ) -> Node:
        for out, dtype, shape in outputs:
            if out:
                self.out.values[out] = Value(out, np.dtype(dtype), tuple(shape))
        node = Node(op, name, list(inputs), [o for o, _, _ in outputs], dict(attrs or {}), origin=list(origin or []))
        self.out.nodes.append(node)
        return node

    def new_int8(self, value: str, qp: QParams) -> str:
        """Declares the int8 form of source tensor `value` (written by the caller's node); returns its name."""
        name = value if value not in self.src.outputs and value not in self.out.values else self.fresh(f"{value}/q")
        self.q[value] = (name, qp)
        self.qparams[name] = qp
        return name

    def _qdq_consts(self, base: str, qp: QParams) -> tuple[str, str]:
        scale = self.add_const(f"{base}/scale", np.array(qp.scale, np.float32))
        zp = self.add_const(f"{base}/zero_point", np.array(qp.zero_point, np.int8))
        return scale, zp

    def int8(self, name: str, qp: QParams | None = None) -> tuple[str, QParams]:
        """The int8 form of source tensor `name` (made with a QuantizeLinear, or quantized if constant)."""
        if name in self.q:
            return self.q[name]
        v = self.src.values[name]
        if v.is_const:
            data = np.asarray(v.data, np.float32)
            qp = qp or activation_qparams(float(data.min(initial=0.0)), float(data.max(initial=0.0)))
            qname = self.add_const(f"{name}/int8", quantize(data, qp))
            self.q[name] = (qname, qp)
            self.qparams[qname] = qp
            return self.q[name]
        qp = qp or self.act_qp(name)
        qname = self.fresh(f"{name}/q")
        scale, zp = self._qdq_consts(qname, qp)
        op = for_onnx("QuantizeLinear", _QDQ_OPSET)
        self.emit(op, f"{name}/quantize", [self.float(name), scale, zp], [(qname, INT8, v.shape)])
        self.q[name] = (qname, qp)
        self.qparams[qname] = qp
        return self.q[name]

    def float(self, name: str) -> str:
        """The float form of source tensor `name` (made with a DequantizeLinear when only int8 exists, once: later
        float readers share it; the int8 tensor may carry the source's own name)."""
        if not name or name in self.fname:
            return self.fname.get(name, name)
        qname, qp = self.q[name]
        out = name if name in self.src.outputs else self.fresh(f"{name}/float")
        scale, zp = self._qdq_consts(f"{qname}/dq", qp)
        v = self.src.values[name]
        self.emit(
            for_onnx("DequantizeLinear", _QDQ_OPSET),
            f"{name}/dequantize",
            [qname, scale, zp],
            [(out, v.dtype, v.shape)],
        )
        self.fname[name] = out
        return out

    # -- the walk -------------------------------------------------------------------------------------------------
    def keep_float(self, node: Node, reason: str, replaced: Mapping[int, str] | None = None) -> None:
        """Copies `node` in float (its inputs in float form; input i replaced by ``replaced[i]`` when given)."""
        replaced = replaced or {}
        inputs = [replaced[i] if i in replaced else self.float(n) if n else "" for i, n in enumerate(node.inputs)]
        captures = [self.float(n) for n in node.captures]
        outs = []
        for o in node.outputs:
            if o:
                v = self.src.values[o]
                outs.append((o, v.dtype, v.shape))
                self.fname[o] = o
                self.layers[o] = (node.name, node.op_type)
            else:
                outs.append(("", INT8, ()))
        new = self.emit(node.op, node.name, inputs, outs, node.attrs, node.origin)
        new.captures = captures
        self.decisions.append(Decision(node.name, node.op_type, None, reason))

    def kept_by_user(self, node: Node) -> str | None:
        names = [node.name, *(n for _, n in node.origin)]
        for k in self.keep:
            if any(n == k or n.startswith(k + "/") for n in names):
                return self.notes.get(k, "user asked")
        return None

    def quantized(self, node: Node, int8_op: str, extra: list[Node] = ()) -> None:
        """Records that `node` (and nodes folded into it) now runs as `int8_op`."""
        self.decisions.append(Decision(node.name, node.op_type, int8_op))
        for n in [node, *extra]:
            for o in n.outputs:
                if o:
                    self.layers[o] = (node.name, int8_op)
        for n in extra:
            self.absorbed.add(id(n))
            self.decisions.append(Decision(n.name, n.op_type, int8_op, f"folded into {node.name}"))
