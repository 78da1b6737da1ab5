"""Seeded random ops on C equal onnx's own reference evaluator (same seed, same draws); unseeded ones are refused
on C with a reason and draw afresh on numpy."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import burnedge

from .c_helpers import one_node_model


def _model(node, feeds, out_type):
    m = one_node_model(node, feeds, out_type, 22)
    m.graph.output[0].type.tensor_type.elem_type = out_type
    return m


@pytest.mark.parametrize("dtype, onnx_type", [(np.float32, TensorProto.FLOAT), (np.float64, TensorProto.DOUBLE)])
def test_seeded_bernoulli_is_onnx_reference_exactly(tmp_path, dtype, onnx_type):
    p = np.random.default_rng(0).random(4096).astype(dtype)
    p[:6] = [0, 1, 0.5, 0.25, 0.75, 1e-7]
    node = helper.make_node("Bernoulli", ["x"], ["y"], seed=3.0)
    model = _model(node, {"x": p}, onnx_type)
    want = ReferenceEvaluator(model).run(None, {"x": p})[0]
    got = burnedge.Session(burnedge.load(model), backend="c").run({"x": p})["y"]
    assert got.dtype == want.dtype and 0.3 < got.mean() < 0.7
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "op, attrs",
    [
        ("RandomUniformLike", {"low": -2.0, "high": 3.0, "seed": 5.0}),
        ("RandomNormalLike", {"mean": 1.0, "scale": 0.5, "seed": 7.0}),
        ("RandomUniformLike", {"seed": 11.0, "dtype": TensorProto.DOUBLE}),
    ],
)
def test_seeded_generators_are_onnx_reference_exactly(op, attrs):
    x = np.zeros((3, 50), np.float32)
    out = attrs.get("dtype", TensorProto.FLOAT)
    model = _model(helper.make_node(op, ["x"], ["y"], **attrs), {"x": x}, out)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    session = burnedge.Session(burnedge.load(model), backend="c")
    for _ in range(2):  # the same draws at every run
        np.testing.assert_array_equal(session.run({"x": x})["y"], want)


def test_unseeded_is_refused_on_c_and_fresh_on_numpy():
    p = np.full(256, 0.5, np.float32)
    model = burnedge.load(_model(helper.make_node("Bernoulli", ["x"], ["y"]), {"x": p}, TensorProto.FLOAT))
    with pytest.raises(burnedge.BurnedgeError, match="Bernoulli has no seed: it would draw afresh every run"):
        burnedge.Session(model, backend="c")
    numpy = burnedge.Session(model, backend="numpy")
    a, b = numpy.run({"x": p})["y"], numpy.run({"x": p})["y"]
    assert set(np.unique(a)) <= {0.0, 1.0} and not np.array_equal(a, b)
