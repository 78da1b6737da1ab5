"""BatchNormalization folding: an inference BN after a Conv / ConvTranspose / Gemm / MatMul with constant weights
is folded into that node's weights and bias.

BN computes ``y = x * k + t`` per channel (dim 1), with ``k = scale / sqrt(var + eps)`` and ``t = B - mean * k``.
When x is produced by a linear node read only by the BN:

- Conv: weights ``W[m] *= k[m]`` (output channel m is W's dim 0), bias ``b = b * k + t`` (created when absent);
- ConvTranspose: output channel m is ``(group, j)`` of W ``[C_in, M / group, ...]``, scaled the same way;
- Gemm (2-D, channel = the last axis N): B's N axis is scaled, ``C = beta * C * k + t`` and beta becomes 1;
- MatMul with a constant 2-D right operand and a 2-D output: B's columns are scaled and an Add of ``t`` follows,
  which fuse_epilogue folds into a FusedMatMul bias.

Steps: for each BN (in order), check it is an inference BN with one output and constant parameters, find the
producer of its input, fold in float64 and cast back, then let the producer write the BN's output. The folded
node's `origin` lists both ONNX nodes, so `inspect` shows the step came from Conv+BatchNormalization.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..ir import Graph, Node
from ..ops import for_onnx
from ._match import Rewriter, axis_vector, origin_of

LINEAR = ("Conv", "ConvTranspose", "Gemm", "MatMul")


def _bn_params(rw: Rewriter, bn: Node) -> tuple[np.ndarray, np.ndarray] | None:
    """(k, t) of an inference BN with one output and constant parameters over channels of dim 1, else None."""
    if bn.op.domain or len([o for o in bn.outputs if o]) != 1 or not bn.outputs[0] or len(bn.inputs) < 5:
        return None
    if bn.attrs.get("training_mode", 0) or bn.attrs.get("spatial", 1) != 1:
        return None
    if bn.op.since < 7 and not bn.attrs.get("is_test", 0) and len(bn.outputs) > 1:
        return None
    params = [rw.const(n) for n in bn.inputs[1:5]]
    if any(p is None for p in params):
        return None
    x = rw.value(bn.inputs[0])
    if len(x.shape) < 2 or x.dtype.kind != "f":
        return None
    scale, b, mean, var = (np.asarray(p, np.float64).reshape(-1) for p in params)
    if not all(p.size == x.shape[1] for p in (scale, b, mean, var)):
        return None
    k = scale / np.sqrt(var + float(bn.attrs.get("epsilon", 1e-5)))
    return k, b - mean * k


def _fold_conv(rw: Rewriter, p: Node, k: np.ndarray, t: np.ndarray) -> list[str] | None:
    w = rw.const(p.inputs[1])
    if w is None or w.dtype.kind != "f" or w.shape[0] != k.size:
        return None
    b = rw.const(p.inputs[2]) if len(p.inputs) > 2 and p.inputs[2] else np.zeros(k.size)
    if b is None:
        return None
    w2 = (w.astype(np.float64) * k.reshape((-1,) + (1,) * (w.ndim - 1))).astype(w.dtype)
    b2 = (np.asarray(b, np.float64).reshape(-1) * k + t).astype(w.dtype)
    return [p.inputs[0], rw.add_const(f"{p.name}/weight_bn", w2), rw.add_const(f"{p.name}/bias_bn", b2)]


def _fold_conv_transpose(rw: Rewriter, p: Node, k: np.ndarray, t: np.ndarray) -> list[str] | None:
    w = rw.const(p.inputs[1])
    g = int(p.attrs.get("group", 1))
    if w is None or w.dtype.kind != "f" or w.shape[1] * g != k.size or w.shape[0] % g:
        return None
    b = rw.const(p.inputs[2]) if len(p.inputs) > 2 and p.inputs[2] else np.zeros(k.size)
    if b is None:
        return None
    spatial = w.shape[2:]
    grouped = w.astype(np.float64).reshape((g, w.shape[0] // g, w.shape[1]) + spatial)
    w2 = (grouped * k.reshape((g, 1, w.shape[1]) + (1,) * len(spatial))).reshape(w.shape).astype(w.dtype)
    b2 = (np.asarray(b, np.float64).reshape(-1) * k + t).astype(w.dtype)
    return [p.inputs[0], rw.add_const(f"{p.name}/weight_bn", w2), rw.add_const(f"{p.name}/bias_bn", b2)]


def _fold_gemm(rw: Rewriter, p: Node, k: np.ndarray, t: np.ndarray) -> tuple[list[str], dict] | None:
    bmat = rw.const(p.inputs[1])
    if bmat is None or bmat.dtype.kind != "f" or bmat.ndim != 2:
        return None
    trans_b = int(p.attrs.get("transB", 0))
    n_axis = 0 if trans_b else 1
    if bmat.shape[n_axis] != k.size:
        return None
    c_name = p.inputs[2] if len(p.inputs) > 2 else ""
    c = rw.const(c_name) if c_name else np.zeros(k.size)
    if c is None:
        return None
    beta = float(p.attrs.get("beta", 1.0)) if c_name else 0.0
    b2 = (bmat.astype(np.float64) * (k.reshape(-1, 1) if trans_b else k.reshape(1, -1))).astype(bmat.dtype)
    c2 = (beta * np.asarray(c, np.float64) * k + t).astype(bmat.dtype)
    attrs = {**p.attrs, "beta": 1.0}
    ins = [p.inputs[0], rw.add_const(f"{p.name}/B_bn", b2), rw.add_const(f"{p.name}/C_bn", c2)]
    return ins, attrs


def _through_bias(rw: Rewriter, producers: dict[str, Node], add: Node | None) -> tuple[Node, np.ndarray] | None:
    """(linear node, c) when `add` is ``Add(linear output, c)`` with c a per-channel constant (a bias the
    exporter kept apart, as paddle2onnx does) and the linear output is read by the Add only."""
    if add is None or add.op_type != "Add" or add.op.domain or len(add.inputs) != 2:
        return None
    for i in (0, 1):
        x, c = add.inputs[i], add.inputs[1 - i]
        arr = rw.const(c)
        p = producers.get(x)
        if arr is None or p is None or p.op.domain or p.op_type not in LINEAR or rw.sole_reader(x) is not add:
            continue
        vec = axis_vector(arr, rw.value(add.outputs[0]).shape, 1)
        if vec is not None and rw.value(x).shape == rw.value(add.outputs[0]).shape:
            return p, vec.astype(np.float64)
    return None


def run(graph: Graph) -> Graph:
    rw = Rewriter(graph)
    producers = graph.producers()
    for bn in list(graph.nodes):
        if bn.op_type != "BatchNormalization":
            continue
        kt = _bn_params(rw, bn)
        p = producers.get(bn.inputs[0])
        if kt is None or p is None or rw.sole_reader(bn.inputs[0]) is not bn:
            continue
        k, t = kt
        extra: list[Node] = []
        via = _through_bias(rw, producers, p)
        if via is not None:  # BN(x + c) = x * k + (t + c * k)
            extra, (p, c) = [p], via
            t = t + c * k
        if p.op.domain or p.op_type not in LINEAR:
            continue
        y = bn.outputs[0]
        origin = origin_of([p, *extra, bn])
        if p.op_type in ("Conv", "ConvTranspose"):
            fold = _fold_conv if p.op_type == "Conv" else _fold_conv_transpose
            ins = fold(rw, p, k, t)
            if ins is None:
                continue
            new = dataclasses.replace(p, inputs=ins, outputs=[y], origin=origin)
            rw.replace([p, *extra, bn], new, at=p)
        elif p.op_type == "Gemm":
            if len(rw.value(y).shape) != 2:
                continue
            folded = _fold_gemm(rw, p, k, t)
            if folded is None:
                continue
            new = dataclasses.replace(p, inputs=folded[0], outputs=[y], attrs=folded[1], origin=origin)
            rw.replace([p, *extra, bn], new, at=p)
        else:  # MatMul: scale B's columns, then add t (fuse_epilogue makes it the FusedMatMul bias)
            bmat = rw.const(p.inputs[1])
            if bmat is None or bmat.ndim != 2 or bmat.dtype.kind != "f" or len(rw.value(y).shape) != 2:
                continue
            if bmat.shape[1] != k.size:
                continue
            b2 = (bmat.astype(np.float64) * k.reshape(1, -1)).astype(bmat.dtype)
            new = dataclasses.replace(p, inputs=[p.inputs[0], rw.add_const(f"{p.name}/B_bn", b2)])
            add = Node(
                for_onnx("Add", max(graph.opset, 14)),
                f"{bn.name}/shift",
                [p.outputs[0], rw.add_const(f"{bn.name}/shift", t.astype(bmat.dtype))],
                [y],
                origin=origin_of([*extra, bn]),
            )
            rw.replace([p], new, at=p)
            rw.replace([*extra, bn], add, at=bn)
            producers[y] = add  # a BN after this one does not fold through the Add
            continue
        producers[y] = new
    return rw.finish()
