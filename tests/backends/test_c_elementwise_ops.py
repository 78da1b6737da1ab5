"""C backend vs onnxruntime on the elementwise ops the node tests barely cover: the inverse and hyperbolic
trigonometric functions, ThresholdedRelu, Celu, Swish, Mish, Shrink, IsInf, the bitwise ops and integer Pow;
odd sizes, broadcasting, 2 threads and every integer width."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from .c_helpers import ONNX_TYPE, check_node

RNG = np.random.default_rng(5)


@pytest.mark.parametrize(
    "op,lo,hi",
    [("Tan", -1.2, 1.2), ("Asin", -1, 1), ("Acos", -1, 1), ("Atan", -9, 9), ("Sinh", -5, 5), ("Cosh", -5, 5),
     ("Asinh", -9, 9), ("Acosh", 1, 9), ("Atanh", -0.99, 0.99), ("Mish", -30, 30), ("Celu", -5, 5)],
)  # fmt: skip
def test_unary_float(op, lo, hi):
    feeds = {"x": RNG.uniform(lo, hi, (3, 7, 5)).astype(np.float32)}
    check_node(helper.make_node(op, ["x"], ["y"]), feeds, 22 if op != "Celu" else 12)


@pytest.mark.parametrize(
    "op,attrs,opset",
    [("ThresholdedRelu", {"alpha": 0.3}, 22), ("Celu", {"alpha": 2.5}, 12), ("Swish", {"alpha": 0.7}, 24),
     ("Shrink", {"lambd": 0.8, "bias": 0.25}, 9)],
)  # fmt: skip
def test_unary_float_attributes(op, attrs, opset):
    feeds = {"x": RNG.uniform(-3, 3, (2, 9, 11)).astype(np.float32)}
    want = None
    if op == "Swish":  # onnxruntime 1.32 has no Swish kernel
        x = feeds["x"].astype(np.float64)
        want = (x / (1 + np.exp(-attrs["alpha"] * x))).astype(np.float32)
    check_node(helper.make_node(op, ["x"], ["y"], **attrs), feeds, opset, want=want)


@pytest.mark.parametrize("neg,pos", [(1, 1), (0, 1), (1, 0), (0, 0)])
def test_isinf(neg, pos):
    x = RNG.standard_normal(67).astype(np.float32)
    x[::3], x[1::5], x[2::7] = np.inf, -np.inf, np.nan
    node = helper.make_node("IsInf", ["x"], ["y"], detect_negative=neg, detect_positive=pos)
    check_node(node, {"x": x}, 20, out_type=ONNX_TYPE[np.dtype(bool)])


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])
@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"])
def test_bitwise(op, dtype):
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, (3, 1, 5), dtype=dtype, endpoint=True)
    b = RNG.integers(info.min, info.max, (4, 1), dtype=dtype, endpoint=True)
    feeds = {"a": a} if op == "BitwiseNot" else {"a": a, "b": b}
    check_node(helper.make_node(op, list(feeds), ["y"]), feeds, 18)


@pytest.mark.parametrize("base,exp", [("int32", "int32"), ("int64", "int64"), ("int64", "int32"), ("int32", "float32")])
def test_integer_pow(base, exp):
    # integer exponents up to 40 wrap int32 / int64 around, as numpy's integer power does; a float exponent stays
    # in range (a float out of the integer range has no defined cast)
    a = RNG.integers(-7, 8, (5, 3)).astype(base)
    b = RNG.integers(0, 41 if exp != "float32" else 10, (3,)).astype(exp)
    want = np.power(a, b.astype(base)) if exp != "float32" else np.power(a.astype(np.float64), b).astype(base)
    check_node(helper.make_node("Pow", ["a", "b"], ["y"]), {"a": a, "b": b}, 15, want=want)
