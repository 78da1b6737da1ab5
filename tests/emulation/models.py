"""Tiny models for the emulation tests, built with onnx.helper: a float CNN with an integer output, and its int8
form (calibrated on a few random batches)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def tiny_cnn(big_weights: int = 0) -> onnx.ModelProto:
    """x[1,3,9,9] -> Conv(pads, stride 1) -> Relu -> MaxPool -> Conv(depthwise) -> GlobalAveragePool -> Flatten ->
    Gemm -> Softmax -> y[1,5], and ArgMax(y) -> k (int64). `big_weights`: extra Gemm columns (RAM checks)."""
    rng = np.random.default_rng(7)
    cols = 5 + big_weights

    def init(name, *shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.5).astype(np.float32), name)

    inits = [init("w1", 8, 3, 3, 3), init("b1", 8), init("w2", 8, 1, 3, 3), init("wg", 8, cols), init("bg", cols)]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], name="dw", group=8, pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["c2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flat"),
        helper.make_node("Gemm", ["f", "wg", "bg"], ["logits"], name="fc"),
    ]
    if big_weights:
        nodes.append(helper.make_node("Identity", ["logits"], ["y"], name="id"))
    else:
        nodes.append(helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=-1))
    nodes.append(helper.make_node("ArgMax", ["y"], ["k"], name="argmax", axis=1, keepdims=0))
    g = helper.make_graph(
        nodes,
        "tiny_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 9, 9])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, cols]),
            helper.make_tensor_value_info("k", TensorProto.INT64, [1]),
        ],
        inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="tests")


def tiny_cnn_float_only() -> onnx.ModelProto:
    """tiny_cnn without its integer output (int8 quantization leaves ArgMax out of scope)."""
    m = tiny_cnn()
    del m.graph.output[1]
    del m.graph.node[-1]
    return m


def calibration(n: int = 8) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(11)
    return [{"x": rng.standard_normal((1, 3, 9, 9)).astype(np.float32)} for _ in range(n)]
