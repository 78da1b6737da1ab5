"""QDQ folding: the DequantizeLinear -> float op -> QuantizeLinear islands of an already-quantized model (as
onnxruntime's quantize_static or PyTorch write them) become burnedge int8 ops; QLinearConv / QLinearMatMul with
constant weights become QConv / QMatMul.

An island is a float node whose activation inputs come from per-tensor int8 DequantizeLinear nodes and whose one
output goes (optionally through a Relu or Clip) to one per-tensor QuantizeLinear. It becomes:

    Conv (constant weights)             QConv (per-channel multipliers; Relu / Clip -> y_min, y_max)
    Gemm / MatMul (constant 2-D B)      QMatMul (+ int32 bias from Gemm's C)
    BatchNormalization                  QConv, depthwise 1x1, weights +-127 (a per-channel affine map)
    Add / Mul of two activations        QAdd / QMul
    AveragePool / GlobalAveragePool     QAvgPool / QGlobalAvgPool (+ QRequant when the output qparams differ)
    Softmax                             QSoftmax when the output has its scale 1/256 and zp -128
    unary elementwise op                QLut: table[i] = Q(op(DQ(i))), the float island evaluated 256 times
    MaxPool, Reshape, Flatten, ...      the same op on the int8 values (+ QRequant of inputs whose qparams differ)

Steps:
  1. uint8 activations become int8 (`_qdq.signed_activations`: exact, value - 128 and zero point - 128);
  2. in order, each candidate node is matched (`_match_*` returns the new nodes or why not); a match replaces the
     float node, its clamp and its QuantizeLinear by int8 nodes writing the QuantizeLinear's output;
  3. DequantizeLinear nodes nobody reads any more are dropped.

Weights: the importer folds DequantizeLinear of constant weights into float32 constants; `_qdq.exact_int8` finds
the int8 values and per-channel scales behind them (exactly: their float32 product gives back every weight bit for
bit), so symmetric int8 weights of any quantizer come back; weights that no int8 tensor with zero point 0 gives
back exactly (asymmetric uint8 ones with |q - zp| > 127, say) keep their island in float. Biases are rounded to
int32 at ``s_in * s_w`` (what onnxruntime's quantizer stores). Islands left in float are correct, just not int8:
`explain(graph)` lists them with the reason, and `run` adds those lines to ``graph.notes`` when the graph has such a
list (no warnings).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from ..ir import Graph, Node, Value
from ..ops import OpDef, for_onnx
from ..ops._eval import evaluate
from ..quantize.qparams import QParams, dequantize, quantize, requant_multiplier
from ._match import origin_of
from ._qdq import Act, add_multipliers, exact_int8, per_tensor_qparams, signed_activations

__all__ = ["explain", "fold", "run"]

_I8 = np.dtype(np.int8)
_CONV_ATTRS = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")
MOVEMENT = (
    "MaxPool", "GlobalMaxPool", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Identity", "Concat",
    "Slice", "DepthToSpace", "SpaceToDepth",
)  # fmt: skip


def _burnedge(op: str) -> OpDef:
    opdef = for_onnx(op, 1, "burnedge")
    assert opdef is not None, op
    return opdef


class _Folder:
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
            bounds = self._clamp_bounds(act)
            if bounds is None:
                return f"{act.op_type} {act.name!r} has bounds that are not constants"
            qy = QParams(np.float32(y.scale), y.zero_point)
            lo, hi = (int(quantize(np.array(b, np.float32), qy)) for b in bounds)
        return ([act, r] if act is not None else [r]), y, lo, hi

    def _clamp_bounds(self, act: Node) -> tuple[float, float] | None:
        if act.op_type == "Relu":
            return 0.0, np.inf
        if act.op.since < 11:
            return float(act.attrs.get("min", -np.inf)), float(act.attrs.get("max", np.inf))
        out = []
        for i, default in ((1, -np.inf), (2, np.inf)):
            name = act.inputs[i] if len(act.inputs) > i else ""
            arr = self.g.values[name].data if name else np.array(default)
            if arr is None or arr.size != 1:
                return None
            out.append(float(arr.reshape(-1)[0]))
        return out[0], out[1]

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
        m, s = requant_multiplier(x.scale, 1.0, to.scale)
        out = out or self.int8_value(f"{x.name}/requant", self.g.values[x.name].shape)
        attrs = {"x_zero_point": x.zero_point, "y_zero_point": to.zero_point, "multiplier": m, "shift": s}
        return Node(_burnedge("QRequant"), f"{name}/requant", [x.name], [out], attrs)

    def bias_int32(self, b: np.ndarray | None, s_x: float, s_w: np.ndarray) -> np.ndarray | str:
        scale = (np.float32(s_x) * s_w.astype(np.float32)).astype(np.float64)
        if b is None:
            return np.zeros(s_w.size, np.int32)
        q = np.rint(np.asarray(b, np.float64).reshape(-1) / scale)
        if q.size != s_w.size or np.any(np.abs(q) >= 2**31):
            return "its bias does not fit int32 at s_in * s_w"
        return q.astype(np.int32)


# -- the matchers: (folder, node) -> (new nodes, folded downstream nodes) or a reason ----------------------------
Match = tuple[list[Node], list[Node]] | str


def _qconv_node(f: _Folder, node: Node, x: Act, w: np.ndarray, s_w: np.ndarray, bias: np.ndarray, tail) -> Node:
    folded, y, lo, hi = tail
    m, s = requant_multiplier(x.scale, s_w, y.scale)
    attrs = {k: node.attrs[k] for k in _CONV_ATTRS if k in node.attrs}
    attrs.update(
        x_zero_point=x.zero_point, y_zero_point=y.zero_point, multiplier=m.tolist(), shift=s.tolist(), y_min=lo,
        y_max=hi,
    )  # fmt: skip
    ins = [x.name, f.add_const(f"{node.name}/weight_s8", w), f.add_const(f"{node.name}/bias_s32", bias)]
    return Node(_burnedge("QConv"), node.name, ins, [y.name], attrs, origin=origin_of([node, *folded]))


def _match_conv(f: _Folder, node: Node) -> Match:
    x = f.dq_input(node.inputs[0])
    if isinstance(x, str):
        return x
    w = f.const(node.inputs[1])
    if w is None or w.ndim < 3:
        return "its weights are not constant"
    tail = f.q_output(node, clamp=True)
    if isinstance(tail, str):
        return tail
    qw = exact_int8(w, 0)
    if qw is None:
        return "its weights are not int8 with zero point 0 (per output channel) exactly"
    b = f.const(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else None
    if len(node.inputs) > 2 and node.inputs[2] and b is None:
        return "its bias is not constant"
    bias = f.bias_int32(b, x.scale, qw[1])
    if isinstance(bias, str):
        return bias
    return [_qconv_node(f, node, x, qw[0], qw[1], bias, tail)], tail[0]


def _match_batchnorm(f: _Folder, node: Node) -> Match:
    """y = x * k + t per channel: a depthwise 1x1 QConv with weights +-127 at scale |k| / 127 (|k| = 0: weight 0)."""
    x = f.dq_input(node.inputs[0])
    if isinstance(x, str):
        return x
    if node.attrs.get("training_mode", 0) or len([o for o in node.outputs if o]) != 1 or len(node.inputs) < 5:
        return "it is not an inference BatchNormalization"
    params = [f.const(n) for n in node.inputs[1:5]]
    shape = f.g.values[node.inputs[0]].shape
    if any(p is None for p in params) or len(shape) < 3:
        return "its parameters are not constant"
    scale, beta, mean, var = (np.asarray(p, np.float64).reshape(-1) for p in params)
    k = scale / np.sqrt(var + float(node.attrs.get("epsilon", 1e-5)))
    t = beta - mean * k
    tail = f.q_output(node, clamp=True)
    if isinstance(tail, str):
        return tail
    c = shape[1]
    w = np.where(k < 0, -127, np.where(k > 0, 127, 0)).astype(np.int8).reshape((c, 1) + (1,) * (len(shape) - 2))
    s_w = np.where(k != 0, np.abs(k) / 127.0, 1.0).astype(np.float32)
    bias = f.bias_int32(t, x.scale, s_w)
    if isinstance(bias, str) or np.any(s_w < np.finfo(np.float32).tiny):
        return "its scale is too small or its shift too large for an int8 affine map"
    conv = dataclasses.replace(node, attrs={"group": c, "kernel_shape": [1] * (len(shape) - 2)})
    return [_qconv_node(f, conv, x, w, s_w, bias, tail)], tail[0]


def _match_gemm(f: _Folder, node: Node) -> Match:
    a = f.dq_input(node.inputs[0])
    if isinstance(a, str):
        return a
    b = f.const(node.inputs[1])
    if node.op_type == "Gemm":
        if node.attrs.get("transA", 0) or node.attrs.get("alpha", 1.0) != 1.0 or b is None:
            return "Gemm with transA, alpha != 1 or a non-constant B"
        b = b.T if node.attrs.get("transB", 0) else b
    if b is None or b.ndim != 2:
        return "its right operand is not a constant matrix"
    tail = f.q_output(node, clamp=True)
    if isinstance(tail, str):
        return tail
    qb = exact_int8(np.ascontiguousarray(b), 1)
    if qb is None:
        return "its weights are not int8 with zero point 0 (per column) exactly"
    c = None
    if node.op_type == "Gemm" and len(node.inputs) > 2 and node.inputs[2]:
        c = f.const(node.inputs[2])
        if c is None or c.size not in (1, b.shape[1]) or (c.ndim == 2 and c.shape[0] != 1):
            return "its C is not a constant vector"
        c = np.broadcast_to(np.asarray(c, np.float64).reshape(-1) * float(node.attrs.get("beta", 1.0)), b.shape[1])
    bias = f.bias_int32(c, a.scale, qb[1])
    if isinstance(bias, str):
        return bias
    folded, y, lo, hi = tail
    m, s = requant_multiplier(a.scale, qb[1], y.scale)
    attrs = {
        "a_zero_point": a.zero_point, "y_zero_point": y.zero_point, "multiplier": m.tolist(), "shift": s.tolist(),
        "y_min": lo, "y_max": hi,
    }  # fmt: skip
    ins = [a.name, f.add_const(f"{node.name}/weight_s8", qb[0])]
    if c is not None:
        ins.append(f.add_const(f"{node.name}/bias_s32", bias))
    return [Node(_burnedge("QMatMul"), node.name, ins, [y.name], attrs, origin=origin_of([node, *folded]))], folded


def _match_binary(f: _Folder, node: Node) -> Match:
    ins = [f.dq_input(n) for n in node.inputs]
    if len(node.inputs) != 2 or any(isinstance(i, str) for i in ins):
        return _match_unary(f, node)  # Add / Mul of an activation and a scalar constant: a table
    a, b = ins
    tail = f.q_output(node, clamp=True)
    if isinstance(tail, str):
        return tail
    folded, y, lo, hi = tail
    attrs = {"a_zero_point": a.zero_point, "b_zero_point": b.zero_point, "y_zero_point": y.zero_point}
    if node.op_type == "Add":
        mult = add_multipliers(a.scale / np.float64(y.scale), b.scale / np.float64(y.scale))
        if mult is None:
            return "its input and output scales are too far apart for QAdd"
        attrs.update(a_multiplier=mult[0], b_multiplier=mult[1], shift=mult[2])
    else:
        attrs["multiplier"], attrs["shift"] = requant_multiplier(a.scale, b.scale, y.scale)
    attrs.update(y_min=lo, y_max=hi)
    op = _burnedge("QAdd" if node.op_type == "Add" else "QMul")
    return [Node(op, node.name, [a.name, b.name], [y.name], attrs, origin=origin_of([node, *folded]))], folded


def _match_pool(f: _Folder, node: Node) -> Match:
    x = f.dq_input(node.inputs[0])
    if isinstance(x, str):
        return x
    tail = f.q_output(node, clamp=False)
    if isinstance(tail, str):
        return tail
    folded, y, _, _ = tail
    out = y.name if x.same_params(y) else f.int8_value(f"{node.name}/pooled", f.g.values[y.name].shape)
    if node.op_type == "GlobalAveragePool":
        pool = Node(_burnedge("QGlobalAvgPool"), node.name, [x.name], [out], {"zero_point": x.zero_point})
    else:
        keys = ("kernel_shape", "auto_pad", "ceil_mode", "count_include_pad", "dilations", "pads", "strides")
        attrs = {k: node.attrs[k] for k in keys if k in node.attrs}
        pool = Node(_burnedge("QAvgPool"), node.name, [x.name], [out], {**attrs, "zero_point": x.zero_point})
    pool.origin = origin_of([node, *folded])
    if out == y.name:
        return [pool], folded
    return [pool, f.requant(Act(out, x.scale, x.zero_point), y, node.name, y.name)], folded


def _match_softmax(f: _Folder, node: Node) -> Match:
    x = f.dq_input(node.inputs[0])
    if isinstance(x, str):
        return x
    rank = len(f.g.values[node.inputs[0]].shape)
    axis = int(node.attrs.get("axis", -1 if node.op.since >= 13 else 1)) % max(rank, 1)
    if node.op.since < 13 and axis != rank - 1:
        return "a Softmax before opset 13 over more than the last axis"
    tail = f.q_output(node, clamp=False)
    if isinstance(tail, str):
        return tail
    folded, y, _, _ = tail
    if not y.same_params(Act("", 1.0 / 256, -128)):
        # QSoftmax writes scale 1/256, zero point -128; a QRequant to other parameters would round twice and
        # drift a step from the single rounding of DQ -> Softmax -> Q (measured on onnxruntime's 1/255 outputs)
        return f"its output scale {y.scale:.6g} / zero point {y.zero_point} is not QSoftmax's 1/256, -128"
    table = np.rint(np.exp(-np.arange(256, dtype=np.float64) * np.float64(x.scale)) * 2.0**20).astype(np.int64)
    sm = Node(_burnedge("QSoftmax"), node.name, [x.name], [y.name], {"axis": axis, "table": table.tolist()})
    sm.origin = origin_of([node, *folded])
    return [sm], folded


def _match_unary(f: _Folder, node: Node) -> Match:
    if "elementwise" not in node.op.tags or len([o for o in node.outputs if o]) != 1:
        return "it is not an elementwise op"
    acts = [(i, n) for i, n in enumerate(node.inputs) if n and f.g.values[n].data is None]
    consts = [f.g.values[n].data for n in node.inputs if n and f.g.values[n].data is not None]
    if len(acts) != 1 or any(c.size != 1 for c in consts):
        return "it reads several activations or a constant that is not one scalar"
    i, name = acts[0]
    x = f.dq_input(name)
    if isinstance(x, str):
        return x
    if f.g.values[node.outputs[0]].shape != f.g.values[name].shape:
        return "its output is broadcast beyond its input"
    tail = f.q_output(node, clamp=True)
    if isinstance(tail, str):
        return tail
    folded, y, lo, hi = tail
    grid = dequantize(np.arange(-128, 128).astype(np.int8), QParams(np.float32(x.scale), x.zero_point))
    args = [None if not n else (grid if k == i else f.g.values[n].data) for k, n in enumerate(node.inputs)]
    with np.errstate(all="ignore"):
        out = np.asarray(evaluate(node, args)[0]).reshape(-1)
    if out.size != 256 or out.dtype.kind != "f":
        return "it does not map one value to one value"
    table = np.clip(quantize(out.astype(np.float32), QParams(np.float32(y.scale), y.zero_point)), lo, hi)
    lut = Node(_burnedge("QLut"), node.name, [x.name], [y.name], {"table": table.astype(np.int8).tolist()})
    lut.origin = origin_of([node, *folded])
    return [lut], folded


def _match_movement(f: _Folder, node: Node) -> Match:
    acts = [n for n in node.inputs if n and f.g.values[n].data is None]
    srcs = [f.dq_input(n) for n in acts]
    bad = [s for s in srcs if isinstance(s, str)]
    if not acts or bad:
        return bad[0] if bad else "it reads no activation"
    if len([o for o in node.outputs if o]) != 1 or not node.outputs[0]:
        return "it has several outputs"
    tail = f.q_output(node, clamp=False)
    if isinstance(tail, str):
        return tail
    folded, y, _, _ = tail
    new: list[Node] = []
    rename = {}
    for n, s in zip(acts, srcs):
        if s.same_params(y):
            rename[n] = s.name
        else:  # the float op moves values: requantising first is the same single rounding Q(DQ(x))
            new.append(f.requant(s, y, f"{node.name}/{len(new)}"))
            rename[n] = new[-1].outputs[0]
    ins = [rename.get(n, n) for n in node.inputs]
    moved = dataclasses.replace(node, inputs=ins, outputs=[y.name], origin=origin_of([node, *folded]))
    return [*new, moved], folded


def _match_qlinear(f: _Folder, node: Node) -> Match:
    """QLinearConv / QLinearMatMul with constant weights and per-tensor activations -> QConv / QMatMul."""
    ins = node.inputs + [""] * (9 - len(node.inputs))
    consts = [f.const(n) for n in ins[1:9]]
    names = ("x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale", "y_zero_point")
    for k, nm in enumerate(names):
        if consts[k] is None and not (nm == "y_zero_point" and not ins[k + 1]):
            return f"its {nm} is not constant"
    xs, xz, w, ws, wz, ys, yz = consts[:7]
    if f.g.values[ins[0]].dtype != _I8 or (xz is not None and xz.dtype != _I8) or yz is None or yz.dtype != _I8:
        return "its activations are not int8"
    if xs.size != 1 or ys.size != 1 or xz.size != 1:
        return "its activation scales are not per tensor"
    conv = node.op_type == "QLinearConv"
    axis = 0 if conv else 1
    if w.ndim < (3 if conv else 2) or (not conv and w.ndim != 2):
        return "its weights have an unexpected rank"
    n_out = w.shape[axis]
    shape = [1] * w.ndim
    shape[axis] = -1
    zp_w = np.broadcast_to(np.asarray(wz, np.int64).reshape(-1), (n_out,)).reshape(shape)
    wq = w.astype(np.int64) - zp_w
    if np.any(np.abs(wq) > 127):
        return "its weights minus their zero point leave [-127, 127]"
    s_w = np.broadcast_to(np.asarray(ws, np.float32).reshape(-1), (n_out,)).astype(np.float32)
    s_x, s_y = float(xs.reshape(-1)[0]), float(ys.reshape(-1)[0])
    m, s = requant_multiplier(s_x, s_w, s_y)
    attrs = {
        ("x_zero_point" if conv else "a_zero_point"): int(xz.reshape(-1)[0]), "y_zero_point": int(yz.reshape(-1)[0]),
        "multiplier": m.tolist(), "shift": s.tolist(),
    }  # fmt: skip
    new_ins = [ins[0], f.add_const(f"{node.name}/weight_s8", wq.astype(np.int8))]
    if conv:
        attrs.update({k: node.attrs[k] for k in _CONV_ATTRS if k in node.attrs})
        b = f.const(ins[8]) if ins[8] else np.zeros(n_out, np.int32)
        if b is None:
            return "its bias is not constant"
        new_ins.append(f.add_const(f"{node.name}/bias_s32", np.asarray(b, np.int32)))
    op = _burnedge("QConv" if conv else "QMatMul")
    return [Node(op, node.name, new_ins, list(node.outputs), attrs, origin=origin_of([node]))], []


RULES: dict[str, Callable[[_Folder, Node], Match]] = {
    "Conv": _match_conv,
    "BatchNormalization": _match_batchnorm,
    "Gemm": _match_gemm,
    "MatMul": _match_gemm,
    "Add": _match_binary,
    "Mul": _match_binary,
    "AveragePool": _match_pool,
    "GlobalAveragePool": _match_pool,
    "Softmax": _match_softmax,
    "QLinearConv": _match_qlinear,
    "QLinearMatMul": _match_qlinear,
    **{op: _match_movement for op in MOVEMENT},
}


def _is_island(f: _Folder, node: Node) -> bool:
    """True when `node` reads a DequantizeLinear output (so leaving it in float is worth a note)."""
    return any(f.producers.get(n) is not None and f.producers[n].op_type == "DequantizeLinear" for n in node.inputs)


def fold(graph: Graph) -> tuple[Graph, list[str]]:
    """The pass, returning the rewritten graph and one line per quantized island left in float."""
    signed_activations(graph)
    f = _Folder(graph)
    for node in graph.nodes:
        if id(node) in f.removed or node.op.domain:
            continue
        rule = RULES.get(node.op_type)
        if rule is None and "elementwise" in node.op.tags:
            rule = _match_unary
        if rule is None:
            if _is_island(f, node) and node.op_type not in ("QuantizeLinear", "DequantizeLinear"):
                f.notes.append(f"{node.op_type} {node.name!r} stays in float: burnedge has no int8 rule for it")
            continue
        result = rule(f, node)
        if isinstance(result, str):
            if _is_island(f, node) or node.op_type.startswith("QLinear"):
                f.notes.append(f"{node.op_type} {node.name!r} stays in float: {result}")
            continue
        new, folded = result
        f.replace[id(node)] = new
        f.removed.update(id(n) for n in folded)
    nodes: list[Node] = []
    for node in graph.nodes:
        if id(node) in f.removed:
            continue
        nodes.extend(f.replace.get(id(node), [node]))
    dead = {o for n in graph.nodes if id(n) in f.replace or id(n) in f.removed for o in n.outputs if o}
    graph.nodes = nodes
    live = {o for n in nodes for o in n.outputs}
    for name in dead - live:
        graph.values.pop(name, None)
    graph.prune()
    return graph, f.notes


def explain(graph: Graph) -> list[str]:
    """One line per quantized island of `graph` that the pass leaves in float, with the reason."""
    return fold(graph.copy())[1]


def run(graph: Graph) -> Graph:
    graph, notes = fold(graph)
    target = getattr(graph, "notes", None)
    if isinstance(target, list):
        target.extend(notes)
    return graph
