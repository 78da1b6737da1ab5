"""int8 rule of Gemm, MatMul, FusedGemm and FusedMatMul: QMatMul when the weights are constant (transposed as
needed), with an int32 bias and the activation as a clamp. Weight scales are floored so the bias and the
accumulators provably fit int32 (`accumulators.py`); a layer that cannot fit stays float.

`weight_only` is the fallback of a layer whose input is too heavy-tailed for per-tensor int8 (BERT's feed-forward
projections): the node stays float, its weights become per-column symmetric int8 levels times a float32 scale,
stored as the float32 products. The C backend recognises such a matrix and keeps it int8 (`dense_w8`), so the
layer keeps most of the memory win while its activations stay float."""

from __future__ import annotations

import numpy as np

from ...ir import Node
from ...ops.fixedpoint import requant_multiplier
from ..accumulators import int8_weights
from ..qparams import quantize, weight_qparams
from ..rewriter import INT8, Rewrite, burnedge_op
from .base import epilogue, float_outputs, ints, rule

__all__ = ["matmul", "weight_only"]


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
    if not (rw.is_activation(a) and rw.has_range(a) and float_outputs(rw, node)) or len(rw.value(a).shape) < 2:
        return "its input or output is not a calibrated float tensor of rank >= 2"
    w, bias = got
    safe = int8_weights(w, bias, rw.int8_qp(a), axis=1)
    if isinstance(safe, str):
        return safe
    wq, wqp, qb = safe
    out, qp_y, y_min, y_max, folded = epilogue(rw, node)
    qa, qp_a = rw.int8(a)
    inputs = [qa, rw.add_const(f"{node.inputs[1]}/int8", wq)]
    if qb is not None:
        inputs.append(rw.add_const(f"{node.name}/bias_int32", qb))
    m, shift = requant_multiplier(qp_a.scale, wqp.scale, qp_y.scale)
    attrs = dict(a_zero_point=qp_a.zero_point, y_zero_point=qp_y.zero_point, multiplier=ints(m), shift=ints(shift))
    attrs.update(y_min=y_min, y_max=y_max)
    name = rw.new_int8(out, qp_y)
    rw.emit(burnedge_op("QMatMul"), node.name, inputs, [(name, INT8, rw.value(out).shape)], attrs, node.onnx_ops)
    rw.quantized(node, "QMatMul", folded)
    return None


def weight_only(rw: Rewrite, node: Node, reason: str) -> bool:
    """Keeps `node` float with its constant 2-d weights rounded to int8 levels (per output column); False when it
    has none (the caller keeps it float as it is)."""
    w = rw.const(node.inputs[1]) if len(node.inputs) > 1 else None
    gemm = node.op_type.endswith("Gemm")
    if w is None or w.ndim != 2 or w.dtype != np.float32 or (gemm and float(node.attrs.get("alpha", 1.0)) != 1.0):
        return False
    axis = 0 if gemm and node.attrs.get("transB", 0) else 1  # the output columns
    qp = weight_qparams(w, axis=axis)
    scale = np.asarray(qp.scale, np.float32).reshape([-1 if a == axis else 1 for a in range(2)])
    levels = quantize(w, qp).astype(np.float32) * scale  # float32 products: what dense_w8 recovers exactly
    name = rw.add_const(f"{node.inputs[1]}/weight_only", levels.astype(np.float32))
    rw.keep_float(node, f"{reason} -> weight-only int8", {1: name})
    return True
