"""C backend vs onnxruntime on BatchNormalization with run-time scale, B, mean and var, and in training mode (the
batch's statistics and the running mean and variance), float32 and float64, 2 threads."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper

import burnedge

from .c_helpers import ONNX_TYPE, one_node_model

RNG = np.random.default_rng(31)


def _feeds(shape, dtype):
    c = shape[1]
    return {"x": RNG.standard_normal(shape).astype(dtype) * 2 + 1, "s": RNG.standard_normal(c).astype(dtype),
            "b": RNG.standard_normal(c).astype(dtype), "m": RNG.standard_normal(c).astype(dtype),
            "v": RNG.random(c).astype(dtype) + 0.5}  # fmt: skip


def _compare(node, feeds, outputs, tol):
    proto = one_node_model(node, feeds, ONNX_TYPE[feeds["x"].dtype], 15)
    for name in outputs[1:]:
        proto.graph.output.append(helper.make_tensor_value_info(name, ONNX_TYPE[feeds["x"].dtype], None))
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    want = dict(zip(outputs, sess.run(outputs, feeds), strict=True))
    got = burnedge.Session(burnedge.load(proto), backend="c", threads=2).run(feeds)
    for name in outputs:
        assert got[name].dtype == want[name].dtype and got[name].shape == want[name].shape, name
        np.testing.assert_allclose(got[name], want[name], rtol=tol, atol=tol, err_msg=name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (3, 4), (1, 2, 3, 2, 2)])
def test_runtime_parameters(shape, dtype):
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-3)
    _compare(node, _feeds(shape, dtype), ["y"], 1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (4, 3)])
def test_training_mode(shape, dtype):
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"], training_mode=1,
                            momentum=0.8)  # fmt: skip
    _compare(node, _feeds(shape, dtype), ["y", "rm", "rv"], 1e-5)
