"""Weight-only int8 for the float GEMM: a constant weight matrix whose every column is int8 levels times a float32
scale (what DequantizeLinear of int8 weights folds to) is kept as int8 B panels plus a scale and a zero point per
column, and dequantized on the fly, a block of column panels at a time, by be_gemm_w8_f32 (dense_w8.h).

Why on the fly and not at load time: the bundle's weights and the process's memory both drop ~4x (a load-time
copy would keep the float weights in RAM), and the scratch is one bounded block of panels. The recovery is exact:
a matrix is taken only when ``float32((q - zero) * scale)`` gives back every weight bit for bit, so the kernel
multiplies the very floats the float GEMM would, and any other float matrix stays float.
"""

from __future__ import annotations

import numpy as np

NR = 16  # gemm.h: BE_NR (dense.py imports this module)

__all__ = ["W8", "int8_columns", "w8_call", "w8_scratch_bytes"]

W8 = tuple[np.ndarray, np.ndarray, np.ndarray]  # q int8 [K, N], scale float32 [N], zero float32 [N]
GEMV_ROWS = 4  # dense_w8.h: BE_W8_GEMV_ROWS
MIN_ELEMENTS = 4096  # smaller matrices save too little to be worth a second kernel
_CACHE: dict[tuple, tuple[np.ndarray, W8 | None]] = {}  # (id, how) -> (the constant, kept so its id stays its own)


def _ulps(s: np.ndarray, k: int) -> np.ndarray:
    """s moved k float32 ulps (toward +inf for k > 0)."""
    out = s.astype(np.float32)
    for _ in range(abs(k)):
        out = np.nextafter(out, np.float32(np.inf if k > 0 else -np.inf), dtype=np.float32)
    return out


def _levels(b: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(d = rint(b / s) as float64, per-column ok: float32(d) * s == b everywhere and max(d) - min(d) <= 255)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.rint(b.astype(np.float64) / s.astype(np.float64)[None, :])
    ok = np.all(np.isfinite(d), axis=0) & (s > 0)
    d = np.where(np.isfinite(d), d, 0.0)
    ok &= np.all(d.astype(np.float32) * s[None, :] == b, axis=0)
    ok &= d.max(axis=0) - d.min(axis=0) <= 255
    return d, ok


def _recover(b: np.ndarray) -> W8 | None:
    """Steps: (1) every column has at most 256 distinct values (one column first: float weights fail at once);
    (2) a step estimate per column, its smallest positive gap, gives the level of its largest |value| (`top`);
    (3) scales float32(max|b| / top) and neighbours up to two ulps away are tried until every column is exact;
    (4) the zero point puts the levels into [-128, 127] (0 when they already fit)."""
    if b.dtype != np.float32 or b.ndim != 2 or b.size < MIN_ELEMENTS or not np.all(np.isfinite(b[:, 0])):
        return None
    if np.unique(b[:, 0]).size > 256:
        return None
    srt = np.sort(b, axis=0)
    if not np.all(np.isfinite(srt)) or np.any(1 + np.count_nonzero(np.diff(srt, axis=0), axis=0) > 256):
        return None
    gaps = np.diff(srt, axis=0)
    gap = np.where(gaps > 0, gaps, np.inf).min(axis=0) if b.shape[0] > 1 else np.full(b.shape[1], np.inf)
    amax = np.abs(srt[[0, -1]]).max(axis=0).astype(np.float64)
    top = np.where(np.isfinite(gap), np.maximum(np.rint(amax / np.where(np.isfinite(gap), gap, 1.0)), 1.0), 1.0)
    base = np.where(amax > 0, amax / top, 1.0).astype(np.float32)
    scale, levels = np.ones(b.shape[1], np.float32), np.zeros(b.shape, np.float64)
    todo = np.ones(b.shape[1], bool)
    for k in (0, 1, -1, 2, -2):
        s = _ulps(base, k)
        d, ok = _levels(b, s)
        new = todo & ok
        scale[new], levels[:, new] = s[new], d[:, new]
        todo &= ~ok
        if not todo.any():
            break
    if todo.any():
        return None
    lo, hi = levels.min(axis=0), levels.max(axis=0)
    zero = np.where((lo >= -128) & (hi <= 127), 0.0, -128.0 - lo)
    return (levels + zero[None, :]).astype(np.int8), scale, zero.astype(np.float32)


def int8_columns(b: np.ndarray, transposed: bool = False, alpha: float = 1.0) -> W8 | None:
    """(q, scale, zero) with ``float32((q - zero) * scale) == w`` bit for bit per column of the weights
    ``w = float32(b.T if transposed else b) * float32(alpha)`` [K, N] (as the float GEMM packs them), or None.
    Remembered per constant: the scratch callback and the lowering both ask."""
    key = (id(b), bool(transposed), float(alpha))
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is b:
        return hit[1]
    if len(_CACHE) > 256:
        _CACHE.clear()
    w = b.T if transposed else b
    out = _recover(w if alpha == 1.0 else w.astype(np.float32) * np.float32(alpha))
    _CACHE[key] = (b, out)
    return out


def w8_scratch_bytes(k: int, rows: int) -> int:
    """dense_w8.h be_gemm_w8_scratch(K), in bytes (none for a GEMV of at most GEMV_ROWS rows)."""
    if rows <= GEMV_ROWS:
        return 0
    nb = max(1, 16384 // (k * NR))
    return (nb * k * NR + 16) * 4


def w8_call(ctx, key: str, w8: W8, m: int, k: int, a: str, rsa: int, csa: int, y: str, ldy: str) -> str:
    """The be_gemm_w8_f32 call of Y(m x N) = epilogue `ep`(A * dequant(q)); the weights packed as int8 B panels."""
    q, scale, zero = w8
    n = q.shape[1]
    cols = -(-n // NR) * NR
    qp = np.zeros((k, cols), np.int8)
    qp[:, :n] = q
    panels = np.ascontiguousarray(qp.reshape(k, -1, NR).transpose(1, 0, 2)).reshape(-1)
    bq = ctx.pack(f"{key}:q", panels)
    sc = ctx.pack(f"{key}:scale", np.pad(scale, (0, cols - n), constant_values=1.0))
    ze = ctx.pack(f"{key}:zero", np.pad(zero, (0, cols - n)))
    return (f"be_gemm_w8_f32({m}, {n}, {k}, {a}, {rsa}, {csa}, {bq}, {sc}, {ze}, {y}, {ldy}, &ep, "
            f"{ctx.scratch() if m > GEMV_ROWS else 0}, threads);")  # fmt: skip
