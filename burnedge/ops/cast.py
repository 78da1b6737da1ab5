"""Type conversion ops: Cast, CastLike, BitCast.

Spec: https://onnx.ai/onnx/operators/. Versions: Cast 1 (`to` is a type name), 6 (`to` is a TensorProto enum),
19 (saturate), 24 (round_mode for float8e8m0); CastLike 15, 19, 24; BitCast 26.
bfloat16, float8, float4, int4 and int2 types come from ml_dtypes (round to nearest even, as the ONNX tests
expect); casts into int4/int2 truncate and wrap here, whatever the ml_dtypes version. Float8 casts saturate to
the type's finite range unless saturate=0. Casting to float8e8m0 works on the float32 bits: the exponent is kept
and round_mode decides whether a non-zero mantissa bumps it; out of range (and infinity) saturates to the largest
power of two, or is NaN when saturate=0. Strings are object arrays of str: parsed as numbers ("1e-5", "INF",
"NaN", case-insensitive) or printed from them.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from onnx import TensorProto

from .. import dtypes
from . import register
from ._intmath import float_to_int

_FLOAT8 = {
    np.dtype(ml_dtypes.float8_e4m3fn),
    np.dtype(ml_dtypes.float8_e4m3fnuz),
    np.dtype(ml_dtypes.float8_e5m2),
    np.dtype(ml_dtypes.float8_e5m2fnuz),
}
_E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)
_SMALL_INT = {np.dtype(t) for t in (ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2, ml_dtypes.uint2)}


def _to_small_int(x: np.ndarray, to: np.dtype) -> np.ndarray:
    """A cast to int4/uint4/int2/uint2: truncate toward zero, then wrap modulo 2**bits, as the ONNX tests do.

    Done here rather than by ml_dtypes, whose float -> int4 conversion saturates from 0.7 on (and wrapped
    before): the result must not depend on the installed version. NaN and infinities give 0.
    """
    info = ml_dtypes.iinfo(to)
    span = int(info.max) - int(info.min) + 1
    if x.dtype.kind in "biu":
        v = x.astype(np.int64)
    else:
        wide = np.asarray(x, dtype=np.float64)
        v = np.where(np.isfinite(wide), np.trunc(np.nan_to_num(wide, posinf=0, neginf=0)) % span, 0).astype(np.int64)
    v = (v - int(info.min)) % span + int(info.min)
    return v.astype(to)


def _to_e8m0(x: np.ndarray, saturate: bool, round_mode: str) -> np.ndarray:
    bits = np.array(x, dtype=np.float32, order="C").view(np.uint32)
    exp = ((bits >> 23) & 0xFF).astype(np.int32)
    mant = bits & 0x7FFFFF
    special = exp == 0xFF
    if round_mode == "up":
        bump = mant != 0
    elif round_mode == "down":
        bump = np.zeros(bits.shape, bool)
    elif round_mode == "nearest":  # ties (mantissa exactly one half) go up
        bump = (mant > 0x400000) | ((mant == 0x400000) & (exp > 0))
    else:
        raise ValueError(f"unknown round_mode {round_mode!r}")
    exp = exp + bump
    over = (exp > 0xFE) & ~special
    exp = np.where(over, 0xFE if saturate else 0xFF, exp)
    inf = special & (mant == 0)
    exp = np.where(special, np.where(inf & saturate, 0xFE, 0xFF), exp)
    if not saturate:
        exp = np.where((bits & 0x7FFFFFFF) == 0, 0xFF, exp)  # zero is below the smallest value
    return exp.astype(np.uint8).view(_E8M0)


def _from_string(x: np.ndarray, to: np.dtype) -> np.ndarray:
    x = np.where(x == "", "0", x)  # shape inference runs on empty strings
    if to.kind in "iu":
        try:
            return x.astype(np.int64).astype(to)
        except (ValueError, OverflowError):
            pass
    if to.kind == "b":
        return x.astype(np.float64) != 0
    return _cast(x.astype(np.float64), to, True, "up")


def _to_string(x: np.ndarray) -> np.ndarray:
    if dtypes.is_float(x.dtype) and x.dtype.kind == "V":
        x = x.astype(np.float32)
    flat = [str(v) for v in x.reshape(-1).tolist()] if x.dtype.kind in "biu" else [str(v) for v in x.reshape(-1)]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(x.shape)


def _cast(x: np.ndarray, to: np.dtype, saturate: bool, round_mode: str) -> np.ndarray:
    to = np.dtype(to)
    if x.dtype.kind == "O":
        return x.copy() if to.kind == "O" else _from_string(x, to)
    if to.kind == "O":
        return _to_string(x)
    if x.dtype == to:
        return x.copy()
    if to == _E8M0:
        return _to_e8m0(x, saturate, round_mode)
    if to in _SMALL_INT and x.dtype not in _SMALL_INT:
        return _to_small_int(x, to)
    if to in _FLOAT8 and dtypes.is_float(x.dtype):
        wide = x.astype(np.float64 if x.dtype == np.float64 else np.float32)
        if saturate:
            top = float(ml_dtypes.finfo(to).max)
            wide = np.clip(wide, -top, top)  # NaN stays NaN
        return wide.astype(to)
    if to.kind in "iu" and x.dtype.kind == "f":
        return float_to_int(x, to)  # NaN -> 0, saturating: see _intmath
    return x.astype(to)


def _dtype(to) -> np.dtype:
    if isinstance(to, str):
        return dtypes.from_onnx(TensorProto.DataType.Value(to.upper()))
    return dtypes.from_onnx(to)


@register("Cast", since=1, tags=("fusable",))
def cast_v1(input, *, to):
    return _cast(input, _dtype(to), True, "up")


@register("Cast", since=6, tags=("fusable",))
def cast_v6(input, *, to):
    return _cast(input, _dtype(to), True, "up")


@register("Cast", since=19, tags=("fusable",))
def cast_v19(input, *, to, saturate=1):
    return _cast(input, _dtype(to), bool(saturate), "up")


@register("Cast", since=24, tags=("fusable",))
def cast(input, *, to, saturate=1, round_mode="up"):
    return _cast(input, _dtype(to), bool(saturate), round_mode)


@register("CastLike", since=15, tags=("fusable",))
def cast_like_v15(input, target_type):
    return _cast(input, target_type.dtype, True, "up")


@register("CastLike", since=19, tags=("fusable",))
def cast_like_v19(input, target_type, *, saturate=1):
    return _cast(input, target_type.dtype, bool(saturate), "up")


@register("CastLike", since=24, tags=("fusable",))
def cast_like(input, target_type, *, saturate=1, round_mode="up"):
    return _cast(input, target_type.dtype, bool(saturate), round_mode)


@register("BitCast", since=26)
def bit_cast(input, *, to):
    out = _dtype(to)
    if out.kind == "O" or input.dtype.kind == "O":
        raise ValueError("BitCast does not take strings")
    if out.itemsize != input.dtype.itemsize:
        raise ValueError(f"BitCast from {input.dtype} to {out} changes the bit width")
    return np.array(input, copy=True, order="C").view(out)
