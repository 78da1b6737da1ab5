"""The island matchers of QDQ import: (folder, node) -> (the int8 nodes replacing it, the downstream nodes folded
into them) or why the island stays float. `MATCHERS` maps each source op to its matcher; an op tagged
"elementwise" without one becomes a table (`match_unary`).

The per-op int8 knowledge they share with quantization sits in `quantize/rules/`: the attributes a QConv / QAvgPool
copies, the QRequant, the QSoftmax table and output qparams, the LUT grid, the Relu / Clip bounds; the multipliers
come from `burnedge.ops.fixedpoint`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from ...ir import Node
from ...ops import tagged
from ...ops.fixedpoint import add_multipliers, requant_multiplier
from ...ops.interpreter import evaluate
from ...passes._match import origin_of
from ..accumulators import overflow_reason
from ..qparams import QParams, quantize
from ..rewriter import burnedge_op
from ..rules.activations import SOFTMAX_SCALE, SOFTMAX_ZERO_POINT, softmax_table
from ..rules.base import CONV_ATTRS, POOL_ATTRS
from ..rules.elementwise import lut_outputs
from .island import Folder
from .params import Act, exact_int8

__all__ = ["MATCHERS", "Match", "match_unary"]

_I8 = np.dtype(np.int8)


Match = tuple[list[Node], list[Node]] | str


def _overflows(w: np.ndarray, bias: np.ndarray, x: Act, axis: int) -> str | None:
    """Why the given int8 weights and bias can overflow the int32 accumulators on x's int8 range, or None."""
    return overflow_reason(w, bias, QParams(np.float32(x.scale), x.zero_point), axis)


def _qconv_node(f: Folder, node: Node, x: Act, w: np.ndarray, s_w: np.ndarray, bias: np.ndarray, tail) -> Node:
    folded, y, lo, hi = tail
    m, s = requant_multiplier(x.scale, s_w, y.scale)
    attrs = {k: node.attrs[k] for k in CONV_ATTRS if k in node.attrs}
    attrs.update(
        x_zero_point=x.zero_point, y_zero_point=y.zero_point, multiplier=m.tolist(), shift=s.tolist(), y_min=lo,
        y_max=hi,
    )  # fmt: skip
    ins = [x.name, f.add_const(f"{node.name}/weight_s8", w), f.add_const(f"{node.name}/bias_s32", bias)]
    return Node(burnedge_op("QConv"), node.name, ins, [y.name], attrs, origin=origin_of([node, *folded]))


def _match_conv(f: Folder, node: Node) -> Match:
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
    why = _overflows(qw[0], bias, x, 0)
    if why is not None:
        return why
    return [_qconv_node(f, node, x, qw[0], qw[1], bias, tail)], tail[0]


def _match_batchnorm(f: Folder, node: Node) -> Match:
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


def _match_gemm(f: Folder, node: Node) -> Match:
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
    why = _overflows(qb[0], bias, a, 1)
    if why is not None:
        return why
    folded, y, lo, hi = tail
    m, s = requant_multiplier(a.scale, qb[1], y.scale)
    attrs = {
        "a_zero_point": a.zero_point, "y_zero_point": y.zero_point, "multiplier": m.tolist(), "shift": s.tolist(),
        "y_min": lo, "y_max": hi,
    }  # fmt: skip
    ins = [a.name, f.add_const(f"{node.name}/weight_s8", qb[0])]
    if c is not None:
        ins.append(f.add_const(f"{node.name}/bias_s32", bias))
    return [Node(burnedge_op("QMatMul"), node.name, ins, [y.name], attrs, origin=origin_of([node, *folded]))], folded


def _match_binary(f: Folder, node: Node) -> Match:
    ins = [f.dq_input(n) for n in node.inputs]
    if len(node.inputs) != 2 or any(isinstance(i, str) for i in ins):
        return match_unary(f, node)  # Add / Mul of an activation and a scalar constant: a table
    a, b = ins
    tail = f.q_output(node, clamp=True)
    if isinstance(tail, str):
        return tail
    folded, y, lo, hi = tail
    attrs = {"a_zero_point": a.zero_point, "b_zero_point": b.zero_point, "y_zero_point": y.zero_point}
    if node.op_type == "Add":
        try:
            mult = add_multipliers(a.scale, b.scale, y.scale)
        except ValueError:
            return "its input and output scales are too far apart for QAdd"
        attrs.update(a_multiplier=mult[0], b_multiplier=mult[1], shift=mult[2])
    else:
        attrs["multiplier"], attrs["shift"] = requant_multiplier(a.scale, b.scale, y.scale)
    attrs.update(y_min=lo, y_max=hi)
    op = burnedge_op("QAdd" if node.op_type == "Add" else "QMul")
    return [Node(op, node.name, [a.name, b.name], [y.name], attrs, origin=origin_of([node, *folded]))], folded


def _match_pool(f: Folder, node: Node) -> Match:
    x = f.dq_input(node.inputs[0])
    if isinstance(x, str):
        return x
    tail = f.q_output(node, clamp=False)
    if isinstance(tail, str):
        return tail
    folded, y, _, _ = tail
    out = y.name if x.same_params(y) else f.int8_value(f"{node.name}/pooled", f.g.values[y.name].shape)
    if node.op_type == "GlobalAveragePool":
        pool = Node(burnedge_op("QGlobalAvgPool"), node.name, [x.name], [out], {"zero_point": x.zero_point})
    else:
        attrs = {k: node.attrs[k] for k in POOL_ATTRS if k in node.attrs}
        pool = Node(burnedge_op("QAvgPool"), node.name, [x.name], [out], {**attrs, "zero_point": x.zero_point})
    pool.origin = origin_of([node, *folded])
    if out == y.name:
        return [pool], folded
    return [pool, f.requant(Act(out, x.scale, x.zero_point), y, node.name, y.name)], folded


def _match_softmax(f: Folder, node: Node) -> Match:
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
    if not y.same_params(Act("", SOFTMAX_SCALE, SOFTMAX_ZERO_POINT)):
        # QSoftmax writes scale 1/256, zero point -128; a QRequant to other parameters would round twice and
        # drift a step from the single rounding of DQ -> Softmax -> Q (measured on onnxruntime's 1/255 outputs)
        return f"its output scale {y.scale:.6g} / zero point {y.zero_point} is not QSoftmax's 1/256, -128"
    sm = Node(burnedge_op("QSoftmax"), node.name, [x.name], [y.name], {"axis": axis, "table": softmax_table(x.scale)})
    sm.origin = origin_of([node, *folded])
    return [sm], folded


def match_unary(f: Folder, node: Node) -> Match:
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
    links = [node]  # a chain of one-tensor float ops (GELU's Div -> Erf) is one table too
    tail = f.q_output(node, clamp=True)
    while isinstance(tail, str) and len(links) < MAX_LUT_CHAIN:
        nxt = _unary_reader(f, links[-1])
        if nxt is None:
            break
        links.append(nxt)
        tail = f.q_output(nxt, clamp=True)
    if isinstance(tail, str):
        return tail
    folded, y, lo, hi = tail
    out = lut_outputs(node, i, f.const, QParams(np.float32(x.scale), x.zero_point))
    for prev, link in zip(links, links[1:]):
        args = [out if n == prev.outputs[0] else f.const(n) for n in link.inputs]
        out = np.asarray(evaluate(link, args)[0]).reshape(-1)
    if out.size != 256 or out.dtype.kind != "f":
        return "it does not map one value to one value"
    table = np.clip(quantize(out.astype(np.float32), QParams(np.float32(y.scale), y.zero_point)), lo, hi)
    lut = Node(burnedge_op("QLut"), node.name, [x.name], [y.name], {"table": table.astype(np.int8).tolist()})
    lut.origin = origin_of([*links, *folded])
    return [lut], [*links[1:], *folded]


MAX_LUT_CHAIN = 8  # float ops one table may stand for


def _unary_reader(f: Folder, node: Node) -> Node | None:
    """The one reader of `node`'s output when it is a float elementwise op of that tensor alone (other inputs
    1-element constants, the same shape): the next link of a table's chain."""
    r = f.sole_reader(node.outputs[0])
    if r is None or r.op.domain or "elementwise" not in r.op.tags or len([o for o in r.outputs if o]) != 1:
        return None
    acts = [n for n in r.inputs if n and f.g.values[n].data is None]
    if acts != [node.outputs[0]] or any(f.g.values[n].data.size != 1 for n in r.inputs if n and n not in acts):
        return None
    return r if f.g.values[r.outputs[0]].shape == f.g.values[node.outputs[0]].shape else None


def _match_movement(f: Folder, node: Node) -> Match:
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


def _match_qlinear(f: Folder, node: Node) -> Match:
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
        attrs.update({k: node.attrs[k] for k in CONV_ATTRS if k in node.attrs})
        b = f.const(ins[8]) if ins[8] else np.zeros(n_out, np.int32)
        if b is None:
            return "its bias is not constant"
        new_ins.append(f.add_const(f"{node.name}/bias_s32", np.asarray(b, np.int32)))
    op = burnedge_op("QConv" if conv else "QMatMul")
    return [Node(op, node.name, new_ins, list(node.outputs), attrs, origin=origin_of([node]))], []


MATCHERS: dict[str, Callable[[Folder, Node], Match]] = {
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
    **{op: _match_movement for op in sorted(tagged("qdq_movement"))},
}
