"""Random generators: RandomUniform, RandomNormal, their -Like forms, and Bernoulli (opsets 1 and 15).

Spec: https://onnx.ai/onnx/operators/. As the ONNX reference does, a node with a `seed` draws from numpy's legacy
generator seeded with int(seed), afresh at every run (so the same draws each run); without one, from a generator
seeded by the OS. Uniform: rand() in the output dtype, times (high - low), plus low; normal: randn() times scale
plus mean; Bernoulli: binomial(1, p) per element of the input. These ops are never folded into constants at import
(`random=True`): an unseeded one must draw anew each run.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from . import Spec, register

__all__ = ["draws"]


def _state(seed: float | None) -> np.random.RandomState:
    return np.random.RandomState() if seed is None or np.isnan(seed) else np.random.RandomState(int(seed))


def _out_dtype(dtype: int | None, like: np.ndarray | None) -> np.dtype:
    return like.dtype if (dtype is None or dtype == 0) and like is not None else dtypes.from_onnx(dtype or 1)


def draws(kind: str, shape: tuple[int, ...], dtype: np.dtype, seed, a: float, b: float) -> np.ndarray:
    """`kind` "uniform" (a = low, b = high) or "normal" (a = mean, b = scale) in the reference's arithmetic."""
    state = _state(seed)
    if kind == "uniform":
        res = state.rand(*shape).astype(dtype)
        res *= b - a
        res += a
    else:
        res = state.randn(*shape).astype(dtype)
        res *= b
        res += a
    return res.astype(dtype)


def _infer_shape(*, shape, dtype=1, **_):
    return [Spec(tuple(int(d) for d in shape), dtypes.from_onnx(dtype or 1))]


def _infer_like(x, *, dtype=None, **_):
    return [Spec(tuple(x.shape), _out_dtype(dtype, x))]


@register("RandomUniform", since=1, random=True, infer=_infer_shape)
def random_uniform(*, shape, dtype=1, high=1.0, low=0.0, seed=None):
    return draws("uniform", tuple(int(d) for d in shape), dtypes.from_onnx(dtype or 1), seed, low, high)


@register("RandomNormal", since=1, random=True, infer=_infer_shape)
def random_normal(*, shape, dtype=1, mean=0.0, scale=1.0, seed=None):
    return draws("normal", tuple(int(d) for d in shape), dtypes.from_onnx(dtype or 1), seed, mean, scale)


@register("RandomUniformLike", since=1, random=True, infer=_infer_like)
def random_uniform_like(x, *, dtype=None, high=1.0, low=0.0, seed=None):
    return draws("uniform", x.shape, _out_dtype(dtype, x), seed, low, high)


@register("RandomNormalLike", since=1, random=True, infer=_infer_like)
def random_normal_like(x, *, dtype=None, mean=0.0, scale=1.0, seed=None):
    return draws("normal", x.shape, _out_dtype(dtype, x), seed, mean, scale)


@register("Bernoulli", since=15, random=True, infer=_infer_like)
def bernoulli(x, *, dtype=None, seed=None):
    """1 with probability x[i], else 0: numpy's binomial(1, p), one uniform draw u per element, which gives 1
    exactly when u > 1 - p for p <= 0.5 and when u <= p above (the C backend computes that from the same draws)."""
    return _state(seed).binomial(1, p=np.asarray(x, np.float64)).astype(_out_dtype(dtype, x))
