"""Storage types the C backend computes in a wider type: float16, bfloat16, float8, float4 and the 4-/2-bit ints.

Each is stored one element per C storage unit, as numpy and ml_dtypes lay it out (kernels/dtype.h), so a bundle's
inputs and outputs are the very arrays users pass. Generated code widens a stored value exactly (`load`), computes
in float (int32 for the small integers), and rounds back to the type (`store`), ties to even, as the reference's
numpy / ml_dtypes arithmetic does after every op.
"""

from __future__ import annotations

import numpy as np

__all__ = ["STORAGE", "compute_ctype", "load", "roundtrip", "store"]

# dtype name -> (C storage type, C compute type, codec suffix of be_ld_* / be_st_*)
_CODECS: dict[str, tuple[str, str, str]] = {
    "float16": ("uint16_t", "float", "f16"),
    "bfloat16": ("uint16_t", "float", "bf16"),
    "float8_e4m3fn": ("uint8_t", "float", "e4m3fn"),
    "float8_e4m3fnuz": ("uint8_t", "float", "e4m3fnuz"),
    "float8_e5m2": ("uint8_t", "float", "e5m2"),
    "float8_e5m2fnuz": ("uint8_t", "float", "e5m2fnuz"),
    "float4_e2m1fn": ("uint8_t", "float", "e2m1"),
    "float8_e8m0fnu": ("uint8_t", "float", "e8m0"),
    "int4": ("uint8_t", "int32_t", "i4"),
    "uint4": ("uint8_t", "int32_t", "u4"),
    "int2": ("uint8_t", "int32_t", "i2"),
    "uint2": ("uint8_t", "int32_t", "u2"),
}
STORAGE: dict[str, str] = {name: c[0] for name, c in _CODECS.items()}
SMALL_INT_BITS = {"int4": 4, "uint4": 4, "int2": 2, "uint2": 2}
FLOAT8 = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")
ROUND_MODES = {"up": 0, "down": 1, "nearest": 2}  # Cast's round_mode for float8e8m0 (be_st_e8m0)


def _name(dtype: np.dtype) -> str:
    return np.dtype(dtype).name


def compute_ctype(dtype: np.dtype) -> str | None:
    """The C type values of a storage type are computed in, None for a type stored as it is computed."""
    c = _CODECS.get(_name(dtype))
    return c[1] if c else None


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The numpy dtype standing for the computation on `dtype` (float32 for the small floats, int32 for int4...)."""
    c = _CODECS.get(_name(dtype))
    if c is None:
        return np.dtype(dtype)
    return np.dtype("float32" if c[1] == "float" else "int32")


def load(expr: str, dtype: np.dtype) -> str:
    """C expression widening the stored element `expr` of `dtype` exactly to its compute type."""
    c = _CODECS.get(_name(dtype))
    return f"be_ld_{c[2]}({expr})" if c else expr


def store(expr: str, dtype: np.dtype, saturate: int = 0, round_mode: str = "down") -> str:
    """C expression rounding the computed value `expr` to the storage bits of `dtype` (ties to even).

    Without `saturate`, out-of-range values become inf or NaN as the type defines (numpy's and ml_dtypes' astype);
    float8e8m0 rounds `round_mode` (the default, down, keeps every power of two it can hold, 2^-127 included).
    """
    name = _name(dtype)
    c = _CODECS[name]
    if name in SMALL_INT_BITS:
        return f"be_st_{c[2]}((int64_t)({expr}))"
    if name == "float8_e8m0fnu":
        return f"be_st_e8m0((double)({expr}), {saturate}, {ROUND_MODES[round_mode]})"
    return f"be_st_{c[2]}((double)({expr}), {saturate})"


def roundtrip(expr: str, dtype: np.dtype, saturate: int = 0, round_mode: str = "down") -> str:
    """`expr` rounded to `dtype` and widened back: the value an op of that type yields, in its compute type."""
    if _name(dtype) not in _CODECS:
        return expr
    return load(store(expr, dtype, saturate, round_mode), dtype)
