"""One scan of QDQ import over a graph: the edges of an island (its DequantizeLinear inputs, its QuantizeLinear
output through an optional Relu / Clip) and the helpers the matchers share.

Who owns what: the matchers read the graph through a Folder and add constants and int8 values to it (`add_const`,
`int8_value`); `replace` and `removed` record what the import swaps in; `import_qdq` applies them.
"""

from __future__ import annotations

import numpy as np

from ...ir import Graph, Node, Value
from ..qparams import QParams, quantize
from ..rewriter import burnedge_op
from ..rules.base import clip_bounds, requant_attrs
from .params import Act, per_tensor_qparams

__all__ = ["Folder"]

_I8 = np.dtype(np.int8)


class Folder:
    """One scan over a graph: the match functions read it, `_emit` records what replaces what."""

    def __init__(self, graph: Graph):
        self.g = graph
        self.producers = graph.producers()
        self.readers = graph.consumers()
        self.replace: dict[int, list[Node]] = {}  # id(float node) -> int8 nodes that run in its place
        self.removed: set[int] = set()  # ids of clamp / QuantizeLinear nodes folded into a replacement
        self.notes: list[str] = []

    # -- the island's edges -------------------------------------------------------------------------------------
    def dq_input(self, name: str) -> Act | str:
        p = self.producers.get(name)
        if p is None or p.op_type != "DequantizeLinear" or p.op.domain:
            return f"input {name!r} does not come from a DequantizeLinear"
        qp = per_tensor_qparams(self.g, p)
        if isinstance(qp, str):
            return f"the DequantizeLinear of {name!r}: {qp}"
        if self.g.values[p.inputs[0]].dtype != _I8 or qp[2] != _I8:
            return f"{p.inputs[0]!r} is {self.g.values[p.inputs[0]].dtype}, not int8 (a uint8 graph input or output?)"
        return Act(p.inputs[0], qp[0], qp[1])

    def sole_reader(self, name: str) -> Node | None:
        rs = self.readers.get(name, [])
        if name in self.g.outputs or len(rs) != 1 or id(rs[0]) in self.removed:
            return None
        return rs[0]

    def q_output(self, node: Node, clamp: bool) -> tuple[list[Node], Act, int, int] | str:
        """(folded nodes, the int8 output, y_min, y_max) when `node`'s output reaches one QuantizeLinear, through a
        Relu or Clip when `clamp` (their bounds become the int8 clamp: Q is monotone, so Q(clip(y)) = clip(Q(y)))."""
        if len([o for o in node.outputs if o]) != 1 or not node.outputs[0]:
            return "it has several outputs"
        r = self.sole_reader(node.outputs[0])
        act = None
        if clamp and r is not None and not r.op.domain and r.op_type in ("Relu", "Clip"):
            act, r = r, self.sole_reader(r.outputs[0])
        if r is None or r.op_type != "QuantizeLinear" or r.op.domain:
            return "its output does not go to one QuantizeLinear"
        qp = per_tensor_qparams(self.g, r)
        if isinstance(qp, str):
            return f"the QuantizeLinear after it: {qp}"
        if qp[2] != _I8 or self.g.values[r.outputs[0]].dtype != _I8:
            return "its QuantizeLinear writes uint8 that stays uint8 (a graph output?)"
        y = Act(r.outputs[0], qp[0], qp[1])
        lo, hi = -128, 127
        if act is not None:
            bounds = clip_bounds(act, self.const)
            if bounds is None:
                return f"{act.op_type} {act.name!r} has bounds that are not constants"
            qy = QParams(np.float32(y.scale), y.zero_point)
            lo, hi = (int(quantize(np.array(b, np.float32), qy)) for b in bounds)
        return ([act, r] if act is not None else [r]), y, lo, hi

    # -- helpers ------------------------------------------------------------------------------------------------
    def const(self, name: str) -> np.ndarray | None:
        return self.g.values[name].data if name else None

    def add_const(self, base: str, arr: np.ndarray) -> str:
        name, k = base, 1
        while name in self.g.values:
            name, k = f"{base}_{k}", k + 1
        arr = np.ascontiguousarray(arr)
        self.g.values[name] = Value(name, arr.dtype, tuple(arr.shape), arr)
        return name

    def int8_value(self, base: str, shape: tuple[int, ...]) -> str:
        name = self.add_const(base, np.zeros(0, np.int8))
        self.g.values[name] = Value(name, _I8, tuple(shape))
        return name

    def requant(self, x: Act, to: Act, name: str, out: str | None = None) -> Node:
        """A QRequant from x's qparams to `to`'s, writing `out` (a new int8 value when None)."""
        out = out or self.int8_value(f"{x.name}/requant", self.g.values[x.name].shape)
        attrs = requant_attrs(x.scale, x.zero_point, to.scale, to.zero_point)
        return Node(burnedge_op("QRequant"), f"{name}/requant", [x.name], [out], attrs)

    def bias_int32(self, b: np.ndarray | None, s_x: float, s_w: np.ndarray) -> np.ndarray | str:
        scale = (np.float32(s_x) * s_w.astype(np.float32)).astype(np.float64)
        if b is None:
            return np.zeros(s_w.size, np.int32)
        q = np.rint(np.asarray(b, np.float64).reshape(-1) / scale)
        if q.size != s_w.size or np.any(np.abs(q) >= 2**31):
            return "its bias does not fit int32 at s_in * s_w"
        return q.astype(np.int32)
