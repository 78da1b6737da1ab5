"""What the int8 lowerings share: requantisation parameters as the kernels take them, the be_qepi epilogue, panels.

The int8 ops themselves (`burnedge/ops/quantized.py`) lower in qconv.py (QConv), qdense.py (QMatMul),
qelementwise.py (QAdd, QMul, QLut, QRequant, QuantizeLinear, DequantizeLinear) and qpool.py (QSoftmax, QAvgPool,
QGlobalAvgPool); their channels-last layout is decided in layout.py.

Everything that depends only on constants is computed by the lowerings, once: weights repacked as int16-pair A
panels (QConv) or int8-pair B panels (QMatMul), the same on every target; the input zero point folded into QConv's
and QMatMul's bias (``bias - x_zp * sum(w)``, wrapping int32 like the kernel's sums, so the kernels read raw int8
activations: the ARM sdot tile needs them in int8); and the requantisation parameters normalised (`rq_params`, the
rule of qgemm.h: degenerate multipliers and shifts replaced by equivalent ones, and the accumulator clamp ``lim``).
The multipliers themselves come from the graph (computed by `burnedge.ops.fixedpoint` at quantisation time).
"""

from __future__ import annotations

import numpy as np

from ....ir import Node
from . import Ctx
from .reduce import attr

__all__ = [
    "MAX_THREADS",
    "QMR",
    "QNR",
    "opt_input",
    "pack_a_pairs",
    "pack_b_pairs",
    "qepi",
    "require_i8",
    "rq_params",
    "wrap32",
]

QMR, QNR, MAX_THREADS = 6, 16, 4  # qgemm.h: BE_QMR, BE_QNR, BE_Q_MAX_THREADS


def rq_params(mult, shift, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalised (m, s, lim) int32 arrays of n channels for qgemm.h's rule, s = 31 - shift in 1..62.

    0 < m < 2^30 -> (m * 2^k, s + k) with m * 2^k in [2^30, 2^31) (the same quotient);
    m == 0 or s >= 63 -> (0, 32): the result is 0; s <= 0 -> (2^30, 1): any non-zero accumulator saturates, as
    with the original; lim = 1 for s <= 20, 2^(s-21) for s <= 31, else INT32_MAX (past lim the output saturates).
    """
    m = np.broadcast_to(np.asarray(mult, np.int64).reshape(-1), (n,)).copy()
    s = 31 - np.broadcast_to(np.asarray(shift, np.int64).reshape(-1), (n,))
    if np.any(m < 0) or np.any(m >= 2**31):
        raise ValueError("requantisation multipliers must lie in [0, 2^31)")
    k = np.where(m > 0, 30 - np.floor(np.log2(np.maximum(m, 1))).astype(np.int64), 0)
    m, s = m << k, s + k
    zero = (m == 0) | (s >= 63)
    sat = ~zero & (s <= 0)
    m = np.where(zero, 0, np.where(sat, 2**30, m))
    s = np.where(zero, 32, np.where(sat, 1, s))
    lim = np.where(s <= 20, 1, np.where(s <= 31, np.left_shift(1, np.clip(s - 21, 0, 30)), 2**31 - 1))
    return m.astype(np.int32), s.astype(np.int32), lim.astype(np.int32)


def wrap32(v: np.ndarray) -> np.ndarray:
    """int64 values modulo 2^32 as int32."""
    return (np.asarray(v, np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


def opt_input(node: Node, i: int) -> str:
    return node.inputs[i] if len(node.inputs) > i and node.inputs[i] else ""


def require_i8(ctx: Ctx, names: list[str]) -> None:
    for name in names:
        if name:
            ctx.require(ctx.dtype(name) == np.int8, f"{name!r} is {ctx.dtype(name)}, not int8")


def qepi(ctx: Ctx, key: str, node: Node, bias: np.ndarray | None, n: int, per_col: bool, zp: int) -> str:
    """A be_qepi initializer; per-column arrays are padded to a multiple of 16 channels."""
    m, s, lim = rq_params(node.attrs["multiplier"], node.attrs["shift"], n)
    pad = -(-n // QNR) * QNR - n if per_col else 0
    m, s, lim = np.pad(m, (0, pad)), np.pad(s, (0, pad), constant_values=32), np.pad(lim, (0, pad), constant_values=1)
    b = ctx.pack(f"{key}:bias", np.pad(bias.astype(np.int32), (0, pad))) if bias is not None else "0"
    lo, hi = int(attr(node, "y_min", -128)), int(attr(node, "y_max", 127))
    ctx.require(-128 <= lo <= hi <= 127, f"[y_min, y_max] = [{lo}, {hi}] is not inside int8")
    return (
        f"{{{b}, {ctx.pack(f'{key}:m', m)}, {ctx.pack(f'{key}:s', s)}, {ctx.pack(f'{key}:lim', lim)}, {zp}, {lo}, "
        f"{hi}, {int(per_col)}}}"
    )


def pack_a_pairs(mat: np.ndarray) -> np.ndarray:
    """(rows, K) int -> int16 A panels: rows padded to QMR, K to even; [panel][kp][r][2]."""
    rows, k = mat.shape
    pad = np.zeros((-(-rows // QMR) * QMR, k + k % 2), np.int16)
    pad[:rows, :k] = mat
    return np.ascontiguousarray(pad.reshape(-1, QMR, pad.shape[1] // 2, 2).transpose(0, 2, 1, 3)).reshape(-1)


def pack_b_pairs(mat: np.ndarray) -> np.ndarray:
    """(K, cols) int8 -> B panels: K padded to even, columns to QNR; [panel][kp][c][2]."""
    k, cols = mat.shape
    pad = np.zeros((k + k % 2, -(-cols // QNR) * QNR), np.int8)
    pad[:k, :cols] = mat
    return np.ascontiguousarray(pad.reshape(pad.shape[0] // 2, 2, -1, QNR).transpose(2, 0, 3, 1)).reshape(-1)
