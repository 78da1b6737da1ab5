"""int8 rules: per source op, how it runs as burnedge int8 ops (ops/quantized.py), or why it stays float.

A rule is ``rule(rw, node) -> str | None``: it checks first, and either returns the reason the node stays float
(emitting nothing) or emits the int8 nodes and returns None. The computing ops:

    Conv, FusedConv (act Relu/Clip/none)       -> QConv: weights per output channel, int32 bias, act as clamp
    Gemm, FusedGemm, MatMul, FusedMatMul        -> QMatMul when the weights are constant (transposed as needed)
    Add / Mul of two tensors                    -> QAdd / QMul (a constant operand is quantized per tensor)
    unary elementwise ops, one-input chains     -> QLut: the float reference on the 256 int8 inputs, quantized
    Softmax (last axis)                         -> QSoftmax
    AveragePool, GlobalAveragePool              -> QAvgPool, QGlobalAvgPool
    Concat                                      -> Concat of inputs requantized (QRequant) to the output's qparams

and the movement ops (`rules_movement.py`), which run unchanged on int8 with the input's qparams. A QConv, QMatMul or
QAdd whose output is read only by a Relu or a Clip with constant bounds absorbs it into its clamp, with that
node's (narrower) range. Cheap ops (LUTs, adds, movement) run in int8 only when one of their inputs already is
int8 or is a graph input: in the middle of a float island they would only add a quantize/dequantize pair.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..ir import Node
from ..ops._eval import evaluate
from .qparams import (
    QParams,
    dequantize,
    quantize,
    quantize_bias,
    requant_multiplier,
    weight_qparams,
)
from .rewrite import INT8, Rewrite, burnedge_op

__all__ = ["RULES", "add_multipliers", "softmax_table"]

Rule = Callable[[Rewrite, Node], "str | None"]
RULES: dict[str, Rule] = {}
_CONV_ATTRS = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")
_POOL_ATTRS = ("kernel_shape", "auto_pad", "ceil_mode", "count_include_pad", "dilations", "pads", "strides")
_SOFTMAX_BITS = 20
_MASK_FLOOR = -1e4  # a calibrated minimum below this is an attention mask, not a signal


def rule(*names: str) -> Callable[[Rule], Rule]:
    def deco(fn: Rule) -> Rule:
        for n in names:
            RULES[n] = fn
        return fn

    return deco


def _ints(a: np.ndarray | int) -> list[int] | int:
    arr = np.asarray(a)
    return int(arr) if arr.ndim == 0 else [int(v) for v in arr.reshape(-1)]


def _float_outputs(rw: Rewrite, node: Node) -> bool:
    outs = [o for o in node.outputs if o]
    return bool(outs) and all(rw.is_activation(o) for o in outs)


def _cheap_ok(rw: Rewrite, names: list[str]) -> str | None:
    """None when some input is int8 already or a graph input; else why a cheap op stays float."""
    if any(rw.has_int8(n) or n in rw.src.inputs for n in names):
        return None
    return "its inputs are float: running it in int8 would only add a quantize/dequantize pair"


def _clamp(qp: QParams, lo: float, hi: float) -> tuple[int, int]:
    q = quantize(np.array([lo, hi], np.float32), qp)
    return int(q[0]), int(q[1])


def _fold(rw: Rewrite, out: str) -> tuple[str, tuple[float, float] | None, list[Node]]:
    """(tensor the int8 op writes, (lo, hi) clamp in real units or None, nodes folded) for a producer of `out`."""
    reader = rw.sole_reader(out)
    if reader is None or reader.op.domain or rw.kept_by_user(reader) is not None:
        return out, None, []
    y = reader.outputs[0]
    if not rw.has_range(y):
        return out, None, []
    if reader.op_type == "Relu":
        return y, (0.0, math.inf), [reader]
    if reader.op_type == "Clip":
        if reader.op.since >= 11:
            bounds = [rw.const(n) if n else None for n in (reader.inputs[1:] + ["", ""])[:2]]
            if any(n and b is None for n, b in zip(reader.inputs[1:3], bounds)):
                return out, None, []
            lo = -math.inf if bounds[0] is None else float(np.asarray(bounds[0]).reshape(-1)[0])
            hi = math.inf if bounds[1] is None else float(np.asarray(bounds[1]).reshape(-1)[0])
        else:
            lo, hi = float(reader.attrs.get("min", -math.inf)), float(reader.attrs.get("max", math.inf))
        return y, (lo, hi), [reader]
    return out, None, []


def _epilogue(rw: Rewrite, node: Node) -> tuple[str, QParams, int, int, list[Node]]:
    """Output tensor, its qparams, y_min, y_max and folded nodes of a QConv / QMatMul / QAdd for `node`."""
    act = node.attrs.get("activation", "")
    out = node.outputs[0]
    folded: list[Node] = []
    bounds: tuple[float, float] | None = None
    if act == "Relu":
        bounds = (0.0, math.inf)
    elif act == "Clip":
        p = list(node.attrs.get("activation_params", ()))
        bounds = (float(p[0]), float(p[1]))
    else:
        out, bounds, folded = _fold(rw, out)
    qp = rw.act_qp(out)
    y_min, y_max = -128, 127
    if bounds is not None:
        y_min, y_max = _clamp(qp, max(bounds[0], -3e38), min(bounds[1], 3e38))
    return out, qp, y_min, y_max, folded


# -- QConv ---------------------------------------------------------------------------------------------------------
@rule("Conv", "burnedge.FusedConv")
def conv(rw: Rewrite, node: Node) -> str | None:
    x, w = node.inputs[0], node.inputs[1]
    b = node.inputs[2] if len(node.inputs) > 2 else ""
    if len(node.inputs) > 3 and node.inputs[3]:
        return "a residual input (split it first)"
    if node.attrs.get("activation", "") not in ("", "Relu", "Clip"):
        return f"activation {node.attrs['activation']} (split it first)"
    if rw.const(w) is None or (b and rw.const(b) is None):
        return "weights or bias computed at run time"
    if not (rw.is_activation(x) and rw.has_range(x) and _float_outputs(rw, node)):
        return "its input or output is not a calibrated float tensor"
    out, qp_y, y_min, y_max, folded = _epilogue(rw, node)
    wf = np.asarray(rw.const(w), np.float32)
    wqp = weight_qparams(wf, axis=0)
    qx, qp_x = rw.int8(x)
    inputs = [qx, rw.add_const(f"{w}/int8", quantize(wf, wqp))]
    if b:
        qb, _ = quantize_bias(np.asarray(rw.const(b), np.float32), qp_x.scale, wqp)
        inputs.append(rw.add_const(f"{b}/int32", qb))
    m, shift = requant_multiplier(qp_x.scale, wqp.scale, qp_y.scale)
    attrs = {k: node.attrs[k] for k in _CONV_ATTRS if k in node.attrs}
    attrs.update(x_zero_point=qp_x.zero_point, y_zero_point=qp_y.zero_point, multiplier=_ints(m), shift=_ints(shift))
    attrs.update(y_min=y_min, y_max=y_max)
    name = rw.new_int8(out, qp_y)
    rw.emit(burnedge_op("QConv"), node.name, inputs, [(name, INT8, rw.value(out).shape)], attrs, node.onnx_ops)
    rw.quantized(node, "QConv", folded)
    return None


# -- QMatMul -------------------------------------------------------------------------------------------------------
def _matmul_weights(rw: Rewrite, node: Node) -> tuple[np.ndarray, np.ndarray | None] | str:
    """(W [K, N], bias [N] or None) as float32, or why the node has no int8 form."""
    op = node.op_type
    b = node.inputs[1]
    wb = rw.const(b)
    if wb is None or wb.ndim != 2:
        return "weights computed at run time or not 2-d (a product of two activations)"
    c = node.inputs[2] if len(node.inputs) > 2 else ""
    cv = rw.const(c) if c else None
    if c and cv is None:
        return "a bias computed at run time"
    w = np.asarray(wb, np.float64)
    if op.endswith("Gemm"):
        if node.attrs.get("transA", 0):
            return "transA=1"
        if node.attrs.get("transB", 0):
            w = w.T
        w = w * float(node.attrs.get("alpha", 1.0))
        if cv is not None:
            cv = np.asarray(cv, np.float64) * float(node.attrs.get("beta", 1.0))
    n = w.shape[1]
    bias = None
    if cv is not None:
        cv = np.asarray(cv, np.float64)
        if cv.size == 1:
            bias = np.full(n, cv.reshape(-1)[0])
        elif cv.size == n and cv.shape[-1] == n:
            bias = cv.reshape(-1)
        else:
            return f"a bias of shape {list(cv.shape)} (not one value per output column)"
    return w.astype(np.float32), (None if bias is None else bias.astype(np.float32))


@rule("Gemm", "MatMul", "burnedge.FusedGemm", "burnedge.FusedMatMul")
def matmul(rw: Rewrite, node: Node) -> str | None:
    a = node.inputs[0]
    if len(node.inputs) > 3 and node.inputs[3]:
        return "a residual input (split it first)"
    if node.attrs.get("activation", "") not in ("", "Relu", "Clip"):
        return f"activation {node.attrs['activation']} (split it first)"
    got = _matmul_weights(rw, node)
    if isinstance(got, str):
        return got
    if not (rw.is_activation(a) and rw.has_range(a) and _float_outputs(rw, node)) or len(rw.value(a).shape) < 2:
        return "its input or output is not a calibrated float tensor of rank >= 2"
    w, bias = got
    out, qp_y, y_min, y_max, folded = _epilogue(rw, node)
    wqp = weight_qparams(w, axis=1)
    qa, qp_a = rw.int8(a)
    inputs = [qa, rw.add_const(f"{node.inputs[1]}/int8", quantize(w, wqp))]
    if bias is not None:
        qb, _ = quantize_bias(bias, qp_a.scale, wqp)
        inputs.append(rw.add_const(f"{node.name}/bias_int32", qb))
    m, shift = requant_multiplier(qp_a.scale, wqp.scale, qp_y.scale)
    attrs = dict(a_zero_point=qp_a.zero_point, y_zero_point=qp_y.zero_point, multiplier=_ints(m), shift=_ints(shift))
    attrs.update(y_min=y_min, y_max=y_max)
    name = rw.new_int8(out, qp_y)
    rw.emit(burnedge_op("QMatMul"), node.name, inputs, [(name, INT8, rw.value(out).shape)], attrs, node.onnx_ops)
    rw.quantized(node, "QMatMul", folded)
    return None


# -- QLut ----------------------------------------------------------------------------------------------------------
def _unary_input(rw: Rewrite, node: Node) -> int | None:
    """Index of the one float activation input of an elementwise node whose other inputs are 1-element constants."""
    acts = [i for i, n in enumerate(node.inputs) if n and not rw.value(n).is_const]
    if len(acts) != 1 or node.captures or len([o for o in node.outputs if o]) != 1:
        return None
    i = acts[0]
    x = node.inputs[i]
    if not rw.is_activation(x) or rw.value(x).shape != rw.value(node.outputs[0]).shape:
        return None
    if any(n and rw.value(n).is_const and rw.const(n).size != 1 for n in node.inputs):
        return None
    return i


def lut(rw: Rewrite, node: Node) -> str | None:
    i = _unary_input(rw, node)
    if i is None:
        return "not a function of one tensor"
    x, y = node.inputs[i], node.outputs[0]
    if not (rw.has_range(x) and rw.has_range(y) and _float_outputs(rw, node)):
        return "its input or output is not a calibrated float tensor"
    why = _cheap_ok(rw, [x])
    if why:
        return why
    qx, qp_x = rw.int8(x)
    qp_y = rw.act_qp(y)
    grid = dequantize(np.arange(-128, 128, dtype=np.int8), qp_x)
    args = [grid if k == i else (rw.const(n) if n else None) for k, n in enumerate(node.inputs)]
    table = quantize(np.asarray(evaluate(node, args)[0], np.float32).reshape(256), qp_y)
    name = rw.new_int8(y, qp_y)
    rw.emit(
        burnedge_op("QLut"),
        node.name,
        [qx],
        [(name, INT8, rw.value(y).shape)],
        {"table": [int(t) for t in table]},
        node.onnx_ops,
    )
    rw.quantized(node, "QLut")
    return None


_LUT_OPS = (
    "Relu Sigmoid Tanh HardSwish HardSigmoid Gelu LeakyRelu Elu Selu Celu Softplus Softsign Mish Clip Exp Log Neg "
    "Abs Sqrt Reciprocal Erf Sin Cos Swish ThresholdedRelu Sub Div Pow"
).split()
for _name in _LUT_OPS:
    RULES[_name] = lut
RULES["burnedge.Elementwise"] = lut


# -- QAdd / QMul ---------------------------------------------------------------------------------------------------
def add_multipliers(s_a: float, s_b: float, s_y: float) -> tuple[int, int, int]:
    """(a_multiplier, b_multiplier, shift) for QAdd: ``m = round(s / s_y * 2^shift)``, the larger in [2^30, 2^31)."""
    ra = float(np.float32(s_a)) / float(np.float32(s_y))
    rb = float(np.float32(s_b)) / float(np.float32(s_y))
    shift = 31 - math.frexp(max(ra, rb))[1]
    while True:
        ma, mb = (int(np.rint(math.ldexp(r, shift))) for r in (ra, rb))
        if max(ma, mb) < 2**31:
            break
        shift -= 1
    if not 1 <= shift <= 62:
        raise ValueError(f"QAdd scales too far apart: s_a/s_y={ra:g}, s_b/s_y={rb:g}")
    return ma, mb, shift


def _binary(rw: Rewrite, node: Node) -> tuple[str, str] | str:
    if len(node.inputs) != 2 or not all(node.inputs) or not _float_outputs(rw, node):
        return "not a float op of two tensors"
    a, b = node.inputs
    for n in (a, b):
        if not _is_float_value(rw, n):
            return "an operand is not float"
        if not rw.value(n).is_const and not rw.has_range(n):
            return "an operand has no usable calibrated range"
    why = _cheap_ok(rw, [n for n in (a, b) if not rw.value(n).is_const])
    return why or (a, b)


def _is_float_value(rw: Rewrite, n: str) -> bool:
    return rw.value(n).dtype.kind == "f"


@rule("Add", "Mul")
def add_mul(rw: Rewrite, node: Node) -> str | None:
    if _unary_input(rw, node) is not None:  # x + c, x * c with one constant: one table
        return lut(rw, node)
    got = _binary(rw, node)
    if isinstance(got, str):
        return got
    if all(rw.value(n).is_const for n in got):
        return "both operands are constant"
    out, qp_y, y_min, y_max, folded = (node.outputs[0], rw.act_qp(node.outputs[0]), -128, 127, [])
    if node.op_type == "Add":
        out, qp_y, y_min, y_max, folded = _epilogue(rw, node)
    if not rw.has_range(out):
        return "its output has no usable calibrated range"
    (qa, qp_a), (qb, qp_b) = rw.int8(got[0]), rw.int8(got[1])
    attrs = dict(a_zero_point=qp_a.zero_point, b_zero_point=qp_b.zero_point, y_zero_point=qp_y.zero_point)
    if node.op_type == "Add":
        ma, mb, shift = add_multipliers(qp_a.scale, qp_b.scale, qp_y.scale)
        attrs.update(a_multiplier=ma, b_multiplier=mb, shift=shift, y_min=y_min, y_max=y_max)
    else:
        m, shift = requant_multiplier(qp_a.scale, qp_b.scale, qp_y.scale)
        attrs.update(multiplier=m, shift=shift)
    op = "QAdd" if node.op_type == "Add" else "QMul"
    name = rw.new_int8(out, qp_y)
    rw.emit(burnedge_op(op), node.name, [qa, qb], [(name, INT8, rw.value(out).shape)], attrs, node.onnx_ops)
    rw.quantized(node, op, folded)
    return None


# -- QSoftmax, pools, Concat -----------------------------------------------------------------------------------------
def softmax_table(scale: float) -> list[int]:
    """table[d] = round(exp(-d * s_x) * 2^20), d = 0..255 (float64, round half even)."""
    d = np.arange(256, dtype=np.float64)
    return [int(v) for v in np.rint(np.exp(-d * float(np.float32(scale))) * 2.0**_SOFTMAX_BITS)]


@rule("Softmax")
def softmax(rw: Rewrite, node: Node) -> str | None:
    x, y = node.inputs[0], node.outputs[0]
    rank = len(rw.value(x).shape)
    axis = int(node.attrs.get("axis", -1 if node.op.since >= 13 else 1))
    if axis % rank != rank - 1:
        return f"axis {axis} is not the last axis"
    if x in rw.unsafe:
        return rw.unsafe[x]
    if not (rw.has_range(x) and _float_outputs(rw, node)):
        return "its input is not a calibrated float tensor"
    if rw.ranges[x][0] < _MASK_FLOOR:
        return f"its input reaches {rw.ranges[x][0]:.3g} (an attention mask): int8 cannot hold it"
    why = _cheap_ok(rw, [x])
    if why:
        return why
    qx, qp_x = rw.int8(x)
    qp_y = QParams(np.float32(1 / 256), -128)
    name = rw.new_int8(y, qp_y)
    attrs = {"axis": -1, "table": softmax_table(qp_x.scale)}
    rw.emit(burnedge_op("QSoftmax"), node.name, [qx], [(name, INT8, rw.value(y).shape)], attrs, node.onnx_ops)
    rw.quantized(node, "QSoftmax")
    return None


@rule("AveragePool", "GlobalAveragePool")
def avg_pool(rw: Rewrite, node: Node) -> str | None:
    x, y = node.inputs[0], node.outputs[0]
    if not rw.has_int8(x):
        return "its input is float"
    qx, qp_x = rw.int8(x)
    if node.op_type == "AveragePool":
        op = "QAvgPool"
        attrs = {k: node.attrs[k] for k in _POOL_ATTRS if k in node.attrs}
    else:
        op, attrs = "QGlobalAvgPool", {}
    attrs["zero_point"] = qp_x.zero_point
    name = rw.new_int8(y, qp_x)
    rw.emit(burnedge_op(op), node.name, [qx], [(name, INT8, rw.value(y).shape)], attrs, node.onnx_ops)
    rw.quantized(node, op)
    return None


@rule("Concat")
def concat(rw: Rewrite, node: Node) -> str | None:
    y = node.outputs[0]
    if not (_float_outputs(rw, node) and rw.has_range(y)):
        return "its output is not a calibrated float tensor"
    acts = [n for n in node.inputs if not rw.value(n).is_const]
    if any(not rw.has_range(n) for n in acts):
        return "an input has no usable calibrated range"
    why = _cheap_ok(rw, acts)
    if why:
        return why
    qp_y = rw.act_qp(y)
    inputs = []
    for n in node.inputs:
        if rw.value(n).is_const:
            inputs.append(rw.int8(n, qp_y)[0])
            continue
        qn, qp = rw.int8(n)
        if qp != qp_y:
            m, shift = requant_multiplier(qp.scale, 1.0, qp_y.scale)
            r = rw.fresh(f"{n}/requant")
            attrs = dict(x_zero_point=qp.zero_point, y_zero_point=qp_y.zero_point, multiplier=m, shift=shift)
            rw.emit(
                burnedge_op("QRequant"),
                f"{node.name}/requant{len(inputs)}",
                [qn],
                [(r, INT8, rw.value(n).shape)],
                attrs,
            )
            rw.qparams[r] = qp_y
            qn = r
        inputs.append(qn)
    name = rw.new_int8(y, qp_y)
    rw.emit(node.op, node.name, inputs, [(name, INT8, rw.value(y).shape)], node.attrs, node.onnx_ops)
    rw.quantized(node, "Concat")
    return None


from . import rules_movement  # noqa: E402,F401 - registers the movement ops in RULES
