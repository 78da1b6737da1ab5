"""The QMatMul lowering: int8 GEMM over B panels (kernel qgemm.c), the activation zero point folded into the bias."""

from __future__ import annotations

import numpy as np

from ....ir import Graph, Node
from . import Ctx, lower
from .qscratch import PAR_MIN_QMACS, kernel_threads, lean
from .quantized import MAX_THREADS, QMR, QNR, opt_input, pack_b_pairs, qepi, require_i8, wrap32
from .reduce import attr

__all__ = ["qmatmul"]


def _gemv(graph: Graph, rows: int) -> bool:
    """A lean plan's QMatMul of fewer rows than an A panel: be_qgemv_i8, which needs no scratch."""
    return lean(graph) and rows < QMR


def _qmm_scratch(graph: Graph, node: Node) -> int:
    """qgemm.h be_qgemm_scratch, with as many A panels as the driver's threads can use (be_qgemv_i8: none)."""
    k, n = graph.values[node.inputs[1]].shape
    rows = int(np.prod(graph.values[node.inputs[0]].shape)) // max(k, 1)
    if _gemv(graph, rows):
        return 0
    mp, np_ = -(-rows // QMR), -(-n // QNR)
    jobs = mp * (min(np_, 2 * MAX_THREADS) if mp < 2 * MAX_THREADS else 1)
    return kernel_threads(rows * n * k, PAR_MIN_QMACS, jobs, graph) * ((k + 1) // 2) * QMR * 4 + 64


@lower("QMatMul", domain="burnedge", scratch=_qmm_scratch)
def qmatmul(ctx: Ctx, node: Node) -> str:
    a_name, b_name, bias_name, y_name = node.inputs[0], node.inputs[1], opt_input(node, 2), node.outputs[0]
    require_i8(ctx, [a_name, b_name, y_name])
    b = ctx.const(b_name)
    ctx.require(b is not None and b.ndim == 2, "the weights must be a constant matrix [K, N]")
    bias = ctx.const(bias_name) if bias_name else None
    ctx.require(not bias_name or bias is not None, "the bias must be constant")
    k, n = b.shape
    ctx.require(ctx.shape(a_name)[-1] == k, "the inner dimensions differ")
    rows = ctx.size(a_name) // max(k, 1)
    key = f"q:mm:{y_name}"
    azp = int(attr(node, "a_zero_point", 0))
    bias = bias.astype(np.int64).reshape(n) if bias is not None else None
    if azp:  # sum (a - a_zp) * b = sum a * b - a_zp * colsum(b): A stays raw int8 (the sdot tile's quads)
        bias = wrap32((0 if bias is None else bias) - azp * b.astype(np.int64).sum(axis=0)).astype(np.int64)
    epi = qepi(ctx, key, node, bias, n, True, int(attr(node, "y_zero_point", 0)))
    bp = ctx.pack(f"{key}:b", pack_b_pairs(b.astype(np.int8)))
    a, y = ctx.tensor(a_name), ctx.tensor(y_name)
    if _gemv(ctx.graph, rows):
        call = f"be_qgemv_i8({rows}, {n}, {k}, {a}, {k}, {bp}, {y}, {n}, &ep);"
    else:
        call = f"be_qgemm_i8({rows}, {n}, {k}, {a}, {k}, 0, {bp}, {y}, {n}, &ep, {ctx.scratch('int16_t')}, threads);"
    return "\n".join(["{", f"  const be_qepi ep = {epi};", f"  {call}", "}"])
