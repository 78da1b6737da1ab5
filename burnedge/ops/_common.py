"""Helpers shared by op files: axis normalisation, output-dtype rules, broadcasting."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

__all__ = ["SUM_DTYPE", "accumulating", "as_axes", "erf", "norm_axis", "same_dtype", "sum_dtype", "sum_work"]

# Ops that add up many terms (Conv, MatMul, Gemm, reductions, Softmax, normalization statistics, pools, RNNs,
# attention) compute in float64 whatever the float type, and round to the output type once at the end. A float32
# sum drifts: on a 256-tap convolution whose taps cancel (a constant-Q filter bank) numpy's float32 product is 1e-5
# off the exact result relative to the output's range, 20 times onnxruntime's error, and a Log downstream turns
# that into 1e-3. In float64 the reference is the exactly rounded result to within float32 precision.
SUM_DTYPE = np.dtype(np.float64)
_SUM: ContextVar[np.dtype] = ContextVar("sum_dtype", default=SUM_DTYPE)


def sum_dtype() -> np.dtype:
    """The dtype long float sums compute in: SUM_DTYPE, unless `accumulating` says otherwise in this context."""
    return _SUM.get()


@contextmanager
def accumulating(dtype: np.dtype | type) -> Iterator[None]:
    """Long sums in `dtype` within the block (this thread/context only): float32 makes the reference a second,
    plainly float32 implementation, whose spread from the float64 one shows how much an output depends on float32
    rounding (the exporter measures it; see verifier)."""
    token = _SUM.set(np.dtype(dtype))
    try:
        yield
    finally:
        _SUM.reset(token)


def norm_axis(axis: int, rank: int, what: str = "axis") -> int:
    """A non-negative axis for rank `rank`; out of range is a ValueError (the node's name gets added upstream)."""
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def as_axes(axes: Sequence[int] | np.ndarray | None, rank: int) -> tuple[int, ...] | None:
    """Normalised, sorted axes from an attribute or a constant input; None stays None."""
    if axes is None:
        return None
    return tuple(sorted(norm_axis(int(a), rank) for a in np.asarray(axes).reshape(-1)))


def sum_work(x: np.ndarray) -> np.ndarray:
    """`x` as float64 (SUM_DTYPE) when it is a float of any width (float8 ... float64, bfloat16); other dtypes
    (integers, bool) unchanged. For ops that add up many terms: see SUM_DTYPE."""
    if x.dtype.kind == "f" or x.dtype.kind == "V":
        return x.astype(sum_dtype(), copy=False)
    return x


def same_dtype(result: np.ndarray | np.generic, like: np.ndarray) -> np.ndarray:
    """`result` as an array of `like`'s dtype (numpy promotes float32 with Python floats to float64 at times)."""
    return np.asarray(result).astype(like.dtype, copy=False)


# erfc(z) ~ t * exp(-z^2 + P(t)), t = 1 / (1 + z/2): the Chebyshev-fitted form from Numerical Recipes, relative
# error below 1.2e-7 for z >= 0. Used where |z| >= 0.5; below that erf's Taylor series is exact to 1e-12.
_ERFC_COEFFS = (0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807,
                -0.18628806, 0.09678418, 0.37409196, 1.00002368, -1.26551223)  # fmt: skip


def erf(x: np.ndarray) -> np.ndarray:
    """erf(x) in float64 for any float array, vectorised (numpy has no erf; scipy is not a dependency)."""
    z = np.asarray(x, dtype=np.float64)
    a = np.abs(z)
    t = 1.0 / (1.0 + 0.5 * a)
    p = np.full_like(t, _ERFC_COEFFS[0])
    for c in _ERFC_COEFFS[1:]:
        p = p * t + c
    far = 1.0 - t * np.exp(p - a * a)
    z2 = z * z
    term, near = z.copy(), z.copy()
    for n in range(1, 12):
        term = term * (-z2) / n
        near = near + term / (2 * n + 1)
    near *= 2.0 / np.sqrt(np.pi)
    return np.where(a < 0.5, near, np.copysign(far, z))
