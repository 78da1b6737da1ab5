"""C backend on Dropout with its mask (inference, and training mode with the reference's seeded mask, the ratio and
training_mode fed at run time) and BitCast, on shapes the node tests do not cover; 2 threads."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import burnedge

from .c_helpers import ONNX_TYPE, check_node

RNG = np.random.default_rng(41)


def _dropout_model(outputs: int, **attrs):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 7, 11])
    r = helper.make_tensor_value_info("r", TensorProto.FLOAT, [])
    t = helper.make_tensor_value_info("t", TensorProto.BOOL, [])
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    outs += [helper.make_tensor_value_info("z", TensorProto.BOOL, None)] * (outputs - 1)
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "z"][:outputs], **attrs)
    graph = helper.make_graph([node], "g", [x, r, t], outs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])


@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("ratio", [0.0, 0.3, 0.9])
@pytest.mark.parametrize("outputs", [1, 2])
def test_dropout_matches_the_reference(training, ratio, outputs):
    model = burnedge.load(_dropout_model(outputs, seed=7))
    feeds = {"x": RNG.standard_normal((3, 7, 11)).astype(np.float32), "r": np.array(ratio, np.float32),
             "t": np.array(training)}  # fmt: skip
    want = burnedge.Session(model, backend="numpy").run(feeds)
    got = burnedge.Session(model, backend="c", threads=2).run(feeds)
    assert set(got) == set(want)
    for k in want:
        assert got[k].dtype == want[k].dtype
        np.testing.assert_array_equal(got[k], want[k])
    if training and ratio:  # the reference's seeded mask drops something, and the C output follows it
        assert not got["y"].all()


def test_training_dropout_without_seed_is_refused():
    model = burnedge.load(_dropout_model(2))
    with pytest.raises(burnedge.BurnedgeError, match="Dropout.*without a seed"):
        burnedge.Session(model, backend="c")


@pytest.mark.parametrize(
    "src,dst", [("float32", "uint32"), ("int64", "float64"), ("uint8", "bool"), ("int16", "uint16"), ("int8", "uint8")]
)
def test_bitcast(src, dst):
    x = RNG.integers(0, 2 if dst == "bool" else 255, (5, 3, 7)).astype(np.uint8)
    x = np.frombuffer(RNG.bytes(105 * np.dtype(src).itemsize), src).reshape(5, 3, 7) if dst != "bool" else x
    x = np.nan_to_num(x) if x.dtype.kind == "f" else x
    node = helper.make_node("BitCast", ["x"], ["y"], to=ONNX_TYPE[np.dtype(dst)])
    check_node(node, {"x": x}, 26, out_type=ONNX_TYPE[np.dtype(dst)], want=x.view(dst))
