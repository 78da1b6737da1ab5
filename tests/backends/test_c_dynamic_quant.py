"""C backend vs onnxruntime on DynamicQuantizeLinear: mixed, all-positive and all-negative inputs, odd sizes,
values on rounding ties; all zeros against the reference."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import burnedge

RNG = np.random.default_rng(43)


def _model():
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])
    outs = [helper.make_tensor_value_info(n, t, None) for n, t in
            (("y", TensorProto.UINT8), ("s", TensorProto.FLOAT), ("z", TensorProto.UINT8))]  # fmt: skip
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)], outs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


@pytest.mark.parametrize("kind", ["mixed", "positive", "negative", "ties"])
def test_dynamic_quantize_linear(kind):
    x = {"mixed": RNG.standard_normal(97) * 3, "positive": RNG.uniform(0.5, 9, 61), "negative": -RNG.uniform(1, 2, 33),
         "ties": np.arange(-255, 256) / 2.0}[kind].astype(np.float32)  # fmt: skip
    proto = _model()
    proto.graph.input[0].type.tensor_type.shape.dim.add().dim_value = x.size
    want = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    got = burnedge.Session(burnedge.load(proto), backend="c", threads=2).run({"x": x})
    for name, w in zip("ysz", want):
        assert got[name].dtype == w.dtype and got[name].shape == w.shape, name
        np.testing.assert_array_equal(got[name], w)


def test_dynamic_quantize_linear_of_zeros_follows_the_reference():
    """All zeros: the reference (the backend contract) gives scale 0; onnxruntime picks scale 1 there instead."""
    proto = _model()
    proto.graph.input[0].type.tensor_type.shape.dim.add().dim_value = 10
    model, feeds = burnedge.load(proto), {"x": np.zeros(10, np.float32)}
    want = burnedge.Session(model, backend="numpy").run(feeds)
    got = burnedge.Session(model, backend="c").run(feeds)
    assert float(want["s"]) == 0.0
    for name in "ysz":
        np.testing.assert_array_equal(got[name], want[name])
