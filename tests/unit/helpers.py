"""Small ONNX models built with onnx.helper for the unit tests."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def in_thread(fn: Callable[[], Any], seconds: float) -> tuple[threading.Thread, dict]:
    """Runs fn() in a daemon thread for at most `seconds`: the thread (alive if fn still runs) and a dict holding
    fn's "value" or its "error" (tests of bounded work: a hang fails the test instead of the run)."""
    result: dict = {}

    def target():
        try:
            result["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            result["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    return t, result
