"""C backend vs onnxruntime on float64 elementwise ops and Reduce*: real double arithmetic (a float32 computation
would be ~1e-7 off), with broadcasting, several reduced axes and 2 threads."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from .test_c_misc_ops import _check

RNG = np.random.default_rng(23)


@pytest.mark.parametrize("op", ["Exp", "Tanh", "Sigmoid", "Cos", "Sin", "Relu"])
def test_float64_unary_in_double(op):
    feeds = {"x": RNG.standard_normal((3, 37)) * 3}
    _check(helper.make_node(op, ["x"], ["y"]), feeds, 13, tol=1e-13)


@pytest.mark.parametrize("op", ["Max", "Min", "Div", "Pow"])
def test_float64_binary_in_double(op):
    feeds = {"a": np.abs(RNG.standard_normal((4, 1, 9))) + 0.5, "b": RNG.standard_normal((5, 9))}
    _check(helper.make_node(op, ["a", "b"], ["y"]), feeds, 13, tol=1e-13)


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceL2", "ReduceProd"])
def test_float64_reduce_in_double(op):
    feeds = {"x": RNG.standard_normal((3, 5, 7)) + 1.0}
    _check(helper.make_node(op, ["x"], ["y"], axes=[0, 2], keepdims=0), feeds, 11, tol=1e-13)


@pytest.mark.parametrize(("sa", "sb"), [((3, 4, 5), (5, 6)), ((2, 1, 3, 4), (3, 4, 2)), ((4,), (4, 3)), ((3, 4), (4,))])
def test_float64_matmul_in_double(sa, sb):
    feeds = {"a": RNG.standard_normal(sa), "b": RNG.standard_normal(sb)}
    _check(helper.make_node("MatMul", ["a", "b"], ["y"]), feeds, 13, tol=1e-13)


@pytest.mark.parametrize(("op", "axis", "opset"), [("Softmax", 1, 13), ("LogSoftmax", -1, 13), ("Softmax", 1, 11)])
def test_float64_softmax_in_double(op, axis, opset):
    feeds = {"x": RNG.standard_normal((3, 5, 7)) * 4}
    _check(helper.make_node(op, ["x"], ["y"], axis=axis), feeds, opset, tol=1e-13)
