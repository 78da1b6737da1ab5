"""Tensor element types: ONNX enum <-> numpy dtype (ml_dtypes supplies bfloat16, float8, int4)."""

from __future__ import annotations

import numpy as np
from onnx import helper

__all__ = ["from_onnx", "is_float", "to_onnx"]


def from_onnx(elem_type: int) -> np.dtype:
    """The numpy dtype of an ONNX TensorProto element type."""
    return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))


def to_onnx(dtype: np.dtype) -> int:
    """The ONNX TensorProto element type of a numpy dtype."""
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def is_float(dtype: np.dtype) -> bool:
    """True for every floating type, including the ml_dtypes ones (bfloat16, float8...)."""
    dtype = np.dtype(dtype)
    return dtype.kind == "f" or (dtype.kind == "V" and "float" in dtype.name)
