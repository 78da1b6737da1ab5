"""C backend vs onnxruntime on 3-D MaxPool and AveragePool (strides, dilations, explicit and auto pads, ceil mode,
count_include_pad, odd sizes, 2 threads), MaxPool's Indices output (1-D and 2-D, both storage orders) and MaxUnpool
(1-D to 3-D, run-time indices)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import burnedge

from .c_helpers import check_node, one_node_model, run_c

RNG = np.random.default_rng(11)
CASES = [
    {"kernel_shape": [2, 3, 2]},
    {"kernel_shape": [3, 3, 3], "strides": [2, 1, 2], "pads": [1, 0, 1, 1, 1, 0]},
    {"kernel_shape": [2, 2, 3], "strides": [2, 2, 2], "ceil_mode": 1},
    {"kernel_shape": [3, 2, 2], "auto_pad": "SAME_UPPER", "strides": [2, 2, 1]},
]


@pytest.mark.parametrize("attrs", CASES)
@pytest.mark.parametrize("dilated", [False, True])
def test_maxpool_3d(attrs, dilated):
    x = RNG.standard_normal((2, 3, 7, 9, 8)).astype(np.float32)
    extra = {"dilations": [2, 1, 2]} if dilated and "auto_pad" not in attrs else {}
    check_node(helper.make_node("MaxPool", ["x"], ["y"], **attrs, **extra), {"x": x}, 12)


@pytest.mark.parametrize("attrs", CASES)
@pytest.mark.parametrize("count_include_pad", [0, 1])
def test_averagepool_3d(attrs, count_include_pad):
    x = RNG.standard_normal((1, 4, 8, 7, 9)).astype(np.float32)
    node = helper.make_node("AveragePool", ["x"], ["y"], count_include_pad=count_include_pad, **attrs)
    check_node(node, {"x": x}, 19)


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_max_unpool_of_max_pool_indices(rank):
    """MaxUnpool of what MaxPool picked (values and indices from onnxruntime), against onnxruntime."""
    shape = [2, 3, 8, 6, 4][: 2 + rank]  # even: the indices address the input, the unpooled shape must match it
    x = RNG.standard_normal(shape).astype(np.float32)
    pool = helper.make_node("MaxPool", ["x"], ["v", "i"], kernel_shape=[2] * rank, strides=[2] * rank)
    outs = [helper.make_tensor_value_info(n, t, None) for n, t in (("v", TensorProto.FLOAT), ("i", TensorProto.INT64))]
    graph = helper.make_graph([pool], "p", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)], outs)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    v, i = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    node = helper.make_node("MaxUnpool", ["v", "i"], ["y"], kernel_shape=[2] * rank, strides=[2] * rank)
    check_node(node, {"v": v, "i": i}, 11, out_type=TensorProto.FLOAT)


def test_max_unpool_index_out_of_range_fails_the_run():
    feeds = {"v": np.ones((1, 1, 2), np.float32), "i": np.array([[[1, 9]]], np.int64)}
    node = helper.make_node("MaxUnpool", ["v", "i"], ["y"], kernel_shape=[2], strides=[2])
    with pytest.raises(burnedge.BurnedgeError, match="error 2"):
        run_c(one_node_model(node, feeds, TensorProto.FLOAT, 11), feeds)


@pytest.mark.parametrize(
    "shape,attrs",
    [((2, 3, 9, 8), {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 0, 1, 1]}),
     ((1, 2, 7, 7), {"kernel_shape": [3, 3], "dilations": [2, 1], "ceil_mode": 1, "strides": [2, 2]}),
     ((2, 2, 11), {"kernel_shape": [4], "strides": [3], "pads": [2, 1]})],
)  # fmt: skip
@pytest.mark.parametrize("storage_order", [0, 1])
def test_max_pool_indices(shape, attrs, storage_order):
    x = np.round(RNG.standard_normal(shape) * 2).astype(np.float32)  # many ties: the first maximum wins
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], storage_order=storage_order, **attrs)
    outs = [helper.make_tensor_value_info(n, t, None) for n, t in (("y", TensorProto.FLOAT), ("i", TensorProto.INT64))]
    graph = helper.make_graph([node], "p", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)], outs)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    want = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    got = burnedge.Session(burnedge.load(proto), backend="c", threads=2).run({"x": x})
    np.testing.assert_array_equal(got["y"], want[0])
    np.testing.assert_array_equal(got["i"], want[1])
