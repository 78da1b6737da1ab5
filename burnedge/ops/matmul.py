"""Matrix products: MatMul, Gemm, MatMulInteger, QLinearMatMul, Einsum and Det.

Spec: https://onnx.ai/onnx/operators/. Versions registered:

- MatMul opset 1+ (numpy-style batch broadcasting, 1-D operands promoted then squeezed);
- Gemm opset 1-6 (legacy ``broadcast`` attribute, C required) and 7+ (C unidirectionally broadcast; optional
  since 11, which the same function handles);
- MatMulInteger opset 10 (int32 result; per-row ``a_zero_point``, per-column ``b_zero_point``);
- QLinearMatMul opset 10 and 21 (21 widens the scale types; per-row/per-column scales and zero points);
- Einsum opset 12; Det opset 11 and 22.

Float products compute in float64 and round once to the input dtype (SUM_DTYPE in _common: float32 sums
drift); results keep the input dtype; MatMul and Gemm give an ``infer`` function so
big models infer shapes without running the product.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from . import Spec, register
from ._common import sum_work

__all__: list[str] = []


# -- MatMul -------------------------------------------------------------------------------------------------------
def _matmul_infer(a, b):
    sa, sb = tuple(a.shape), tuple(b.shape)
    if not sa or not sb:
        raise ModelError(f"MatMul needs operands of rank >= 1, got shapes {list(sa)} and {list(sb)}")
    ea = (1,) + sa if len(sa) == 1 else sa
    eb = sb + (1,) if len(sb) == 1 else sb
    if ea[-1] != eb[-2]:
        raise ModelError(f"MatMul: inner dimensions differ, shapes {list(sa)} and {list(sb)}")
    try:
        batch = np.broadcast_shapes(ea[:-2], eb[:-2])
    except ValueError:
        raise ModelError(f"MatMul: batch dimensions do not broadcast, shapes {list(sa)} and {list(sb)}") from None
    shape = tuple(batch) + ((ea[-2],) if len(sa) > 1 else ()) + ((eb[-1],) if len(sb) > 1 else ())
    return [Spec(shape, np.dtype(a.dtype))]


def _as_float_work(x: np.ndarray) -> np.ndarray:
    """bfloat16/float8 (ml_dtypes) have no fast matmul: compute those in float32."""
    return x.astype(np.float32) if x.dtype.kind == "V" else x


@register("MatMul", 1, infer=_matmul_infer)
def matmul(a, b):
    """MatMul opset 1, 9, 13 (same semantics; later versions add types)."""
    out = np.matmul(sum_work(a), sum_work(b))
    return np.asarray(out).astype(a.dtype, copy=False)


# -- Gemm ---------------------------------------------------------------------------------------------------------
def _gemm_infer(a, b, c=None, *, alpha=1.0, beta=1.0, transA=0, transB=0, broadcast=0):
    sa, sb = tuple(a.shape), tuple(b.shape)
    if len(sa) != 2 or len(sb) != 2:
        raise ModelError(f"Gemm needs 2-D A and B, got shapes {list(sa)} and {list(sb)}")
    m, k = (sa[1], sa[0]) if transA else sa
    k2, n = (sb[1], sb[0]) if transB else sb
    if k != k2:
        raise ModelError(f"Gemm: inner dimensions differ ({k} vs {k2}), shapes {list(sa)} and {list(sb)}")
    if c is not None:
        try:
            if np.broadcast_shapes(tuple(c.shape), (m, n)) != (m, n):
                raise ValueError
        except ValueError:
            raise ModelError(f"Gemm: C of shape {list(c.shape)} does not broadcast to {[m, n]}") from None
    return [Spec((m, n), np.dtype(a.dtype))]


def _gemm(a, b, c, alpha, beta, trans_a, trans_b):
    dtype = a.dtype
    a, b = sum_work(a), sum_work(b)
    a = a.T if trans_a else a
    b = b.T if trans_b else b
    y = a @ b
    work = y.dtype.type
    if alpha != 1.0:
        y = y * work(alpha) if y.dtype.kind == "f" else y * alpha
    if c is not None and beta != 0.0:
        c = sum_work(c)
        y = y + (c if beta == 1.0 else (c * work(beta) if c.dtype.kind == "f" else c * beta))
    return np.asarray(y).astype(dtype, copy=False)


@register("Gemm", 1, infer=_gemm_infer)
def gemm_v1(a, b, c, *, alpha=1.0, beta=1.0, transA=0, transB=0, broadcast=0):
    """Gemm opset 1 and 6: C required; ``broadcast`` allows C to broadcast (numpy rules cover both cases)."""
    return _gemm(a, b, c, alpha, beta, transA, transB)


@register("Gemm", 7, infer=_gemm_infer)
def gemm(a, b, c=None, *, alpha=1.0, beta=1.0, transA=0, transB=0):
    """Gemm opset 7, 9, 11, 13: C broadcasts to (M, N); optional since 11."""
    return _gemm(a, b, c, alpha, beta, transA, transB)


# -- quantized products -------------------------------------------------------------------------------------------
def _per_row(v, a: np.ndarray) -> np.ndarray:
    """A zero point or scale for `a`'s rows: a scalar, or 1-D of length M applying along axis -2."""
    v = np.asarray(v)
    if v.ndim == 1 and v.size > 1 and a.ndim >= 2:
        return v.reshape(-1, 1)
    return v


def _int_product(a, b, a_zp, b_zp) -> np.ndarray:
    """(a - a_zp) @ (b - b_zp) exactly, as int64 (float64 BLAS is exact for 8-bit operands)."""
    af = a.astype(np.float64)
    bf = b.astype(np.float64)
    if a_zp is not None:
        af = af - _per_row(a_zp, a).astype(np.float64)
    if b_zp is not None:
        bf = bf - np.asarray(b_zp).astype(np.float64)
    return np.rint(np.matmul(af, bf)).astype(np.int64)


@register("MatMulInteger", 10)
def matmul_integer(a, b, a_zero_point=None, b_zero_point=None):
    """MatMulInteger opset 10: int32 result of the zero-point-adjusted product."""
    return _int_product(a, b, a_zero_point, b_zero_point).astype(np.int32)


def _qlinear_matmul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point):
    acc = _int_product(a, b, a_zero_point, b_zero_point).astype(np.float64)
    sa = _per_row(a_scale, a).astype(np.float32)
    sb = np.asarray(b_scale).astype(np.float32)
    sy = np.asarray(y_scale).astype(np.float32)
    y = np.rint(acc.astype(np.float32) * (sa * sb / sy))
    zp = np.asarray(y_zero_point)
    info = np.iinfo(zp.dtype)
    y = y + zp.astype(np.float32)
    return np.clip(y, info.min, info.max).astype(zp.dtype)


@register("QLinearMatMul", 10)
def qlinear_matmul_v10(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point):
    """QLinearMatMul opset 10: float32 scales, 8-bit operands, round half to even, saturate to y's type."""
    return _qlinear_matmul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point)


@register("QLinearMatMul", 21)
def qlinear_matmul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point):
    """QLinearMatMul opset 21: as 10, scales may also be float16/bfloat16."""
    return _qlinear_matmul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point)


# -- Einsum, Det --------------------------------------------------------------------------------------------------
@register("Einsum", 12)
def einsum(*inputs, equation):
    """Einsum opset 12: explicit ('->') and implicit output, ellipsis broadcasting."""
    eq = equation.replace(" ", "")
    dtype = inputs[0].dtype
    work = [_as_float_work(x) for x in inputs]
    out = np.asarray(np.einsum(eq, *work, optimize=len(work) > 2))
    if any(np.shares_memory(out, x) for x in work):
        out = out.copy()
    return out.astype(dtype, copy=False)


def _det(x):
    dtype = x.dtype
    work = x.astype(np.float32) if dtype.kind == "V" or dtype.itemsize < 4 else x
    return np.asarray(np.linalg.det(work)).astype(dtype, copy=False)


@register("Det", 11)
def det_v11(x):
    """Det opset 11: determinant of the trailing square matrices."""
    return _det(x)


@register("Det", 22)
def det(x):
    """Det opset 22: as 11 (adds bfloat16)."""
    return _det(x)
