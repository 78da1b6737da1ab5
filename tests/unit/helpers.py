"""Small ONNX models built with onnx.helper for the unit tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.save(model, str(path))
    return path


def mlp(opset: int = 17, batch: int | str = 1) -> onnx.ModelProto:
    """x[batch,4] -> MatMul -> Add -> Relu -> y[batch,3], weights as initializers."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="matmul"),
        helper.make_node("Add", ["h", "b"], ["z"], name="add"),
        helper.make_node("Relu", ["z"], ["y"], name="relu"),
    ]
    g = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 3])],
        [w, b],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def mlp_reference(x: np.ndarray, model: onnx.ModelProto) -> np.ndarray:
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    return np.maximum(x @ inits["w"] + inits["b"], 0)
