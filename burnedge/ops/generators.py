"""Tensor generators and pass-throughs: Constant, ConstantOfShape, Range, EyeLike, Dropout.

Spec: https://onnx.ai/onnx/operators/. Versions: Constant 1 (value), 11 (sparse_value), 12 (value_float(s),
value_int(s), value_string(s)); ConstantOfShape 9; Range 11, 27 (stash_type); EyeLike 9; Dropout 1 (is_test,
ratio attrs; mask of the input's type), 7, 10 (bool mask), 12 (ratio and training_mode inputs, seed).
Dropout in inference mode (the default) is the identity with an all-true mask; training mode draws a mask.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from . import register


# -- Constant -----------------------------------------------------------------------------------------------------
def _constant(**attrs) -> np.ndarray:
    given = {k: v for k, v in attrs.items() if v is not None}
    if len(given) != 1:
        raise ValueError(f"Constant needs exactly one value attribute, got {sorted(given) or 'none'}")
    ((key, v),) = given.items()
    if key in ("value", "sparse_value"):
        return np.array(v, copy=True)
    kinds = {
        "value_float": np.float32,
        "value_floats": np.float32,
        "value_int": np.int64,
        "value_ints": np.int64,
        "value_string": object,
        "value_strings": object,
    }
    return np.array(v, dtype=kinds[key])


@register("Constant", since=1)
def constant_v1(*, value):
    return _constant(value=value)


@register("Constant", since=11)
def constant_v11(*, value=None, sparse_value=None):
    return _constant(value=value, sparse_value=sparse_value)


@register("Constant", since=12)
def constant(
    *,
    value=None,
    sparse_value=None,
    value_float=None,
    value_floats=None,
    value_int=None,
    value_ints=None,
    value_string=None,
    value_strings=None,
):
    return _constant(
        value=value,
        sparse_value=sparse_value,
        value_float=value_float,
        value_floats=value_floats,
        value_int=value_int,
        value_ints=value_ints,
        value_string=value_string,
        value_strings=value_strings,
    )


@register("ConstantOfShape", since=9, static=(0,))
def constant_of_shape(input, *, value=None):
    fill = np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(-1)
    shape = tuple(int(d) for d in np.asarray(input).reshape(-1))
    return np.full(shape, fill[0], dtype=fill.dtype)


# -- Range --------------------------------------------------------------------------------------------------------
def _range(start, limit, delta) -> np.ndarray:
    dtype = np.asarray(start).dtype
    s, lim, d = (np.asarray(v).reshape(()) for v in (start, limit, delta))
    if dtype.kind in "iu":
        s, lim, d = int(s), int(lim), int(d)
        if d == 0:
            raise ValueError("Range delta cannot be 0")
        n = max(-((s - lim) // d), 0)
        return (s + np.arange(n, dtype=np.int64) * d).astype(dtype)
    s, lim, d = (float(v.astype(np.float32)) if dtype.kind == "V" else float(v) for v in (s, lim, d))
    if d == 0:
        raise ValueError("Range delta cannot be 0")
    n = max(math.ceil((lim - s) / d), 0)
    work = np.float64 if dtype == np.float64 else np.float32
    return (work(s) + np.arange(n, dtype=work) * work(d)).astype(dtype)


@register("Range", since=11, static=(0, 1, 2))
def range_v11(start, limit, delta):
    return _range(start, limit, delta)


@register("Range", since=27, static=(0, 1, 2))
def range_(start, limit, delta, *, stash_type=1):
    return _range(start, limit, delta)


# -- EyeLike ------------------------------------------------------------------------------------------------------
@register("EyeLike", since=9)
def eye_like(input, *, dtype=None, k=0):
    out = input.dtype if dtype is None else dtypes.from_onnx(dtype)
    if input.ndim != 2:
        raise ValueError(f"EyeLike needs a 2-D input, got rank {input.ndim}")
    return np.eye(input.shape[0], input.shape[1], k, dtype=out)


# -- Dropout ------------------------------------------------------------------------------------------------------
def _dropout(x: np.ndarray, ratio: float, training: bool, seed, mask_dtype, n_outputs: int):
    if not training or ratio == 0:
        out = x.copy()
        keep = np.ones(x.shape, dtype=bool)
    else:
        # numpy's seeded legacy generator, uniform on [0, 1): the stream the ONNX node tests drew their masks from
        keep = np.random.RandomState(seed).random_sample(x.shape) >= ratio
        out = (x * keep / (1.0 - ratio)).astype(x.dtype)
    if n_outputs < 2:
        return out
    return out, keep.astype(mask_dtype)


@register("Dropout", since=1, tags=("view",))
def dropout_v1(data, *, ratio=0.5, is_test=0, consumed_inputs=None, _n_outputs):
    return _dropout(data, ratio, False, None, data.dtype, _n_outputs)


@register("Dropout", since=7, tags=("view",))
def dropout_v7(data, *, ratio=0.5, _n_outputs):
    return _dropout(data, ratio, False, None, data.dtype, _n_outputs)


@register("Dropout", since=10, tags=("view",))
def dropout_v10(data, *, ratio=0.5, _n_outputs):
    return _dropout(data, ratio, False, None, bool, _n_outputs)


@register("Dropout", since=12, tags=("view",))
def dropout(data, ratio=None, training_mode=None, *, seed=None, _n_outputs):
    r = 0.5 if ratio is None else float(np.asarray(ratio).reshape(-1)[0])
    training = training_mode is not None and bool(np.asarray(training_mode).reshape(-1)[0])
    return _dropout(data, r, training, seed, bool, _n_outputs)
