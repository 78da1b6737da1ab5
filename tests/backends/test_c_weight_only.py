"""Weight-only int8 models on the C backend: DequantizeLinear of int8 weights feeding MatMul / Gemm keeps int8
weights in the bundle (~4x fewer weight bytes), dequantized on the fly (dense_w8.py), and still matches
onnxruntime within the float tolerance; float weights that are not int8 levels stay float."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge import compiler
from burnedge.backends.c import BACKEND
from burnedge.backends.c.emit import emit
from burnedge.backends.c.lower.dense_w8 import int8_columns

RNG = np.random.default_rng(11)
K, N1, N2, N3 = 203, 200, 75, 70  # odd K, column counts off the 16-wide panels, several dequantized blocks


def _dq(inits, nodes, name, q, scale, zero, axis=None):
    inits += [numpy_helper.from_array(q, f"{name}_q"), numpy_helper.from_array(scale, f"{name}_s"),
              numpy_helper.from_array(zero, f"{name}_z")]  # fmt: skip
    extra = {} if axis is None else {"axis": axis}
    nodes.append(helper.make_node("DequantizeLinear", [f"{name}_q", f"{name}_s", f"{name}_z"], [name], **extra))
    return name


def _weight_only(rows: tuple[int, ...]) -> tuple[onnx.ModelProto, int]:
    """x -> MatMul(DQ per column, zero points != 0) -> Relu -> Gemm(transB, DQ per tensor) -> Gemm(DQ per column of
    B, bias) -> y; returns the model and the float32 bytes its dequantized weights take."""
    nodes, inits = [], []
    scales = (RNG.random(N1) * 0.02 + 1e-3).astype(np.float32)
    w1 = _dq(inits, nodes, "w1", RNG.integers(-128, 128, (K, N1)).astype(np.int8), scales,
             RNG.integers(-30, 30, N1).astype(np.int8), axis=1)  # fmt: skip
    w2 = _dq(inits, nodes, "w2", RNG.integers(-128, 128, (N2, N1)).astype(np.int8), np.array(0.004, np.float32),
             np.array(-3, np.int8))  # fmt: skip
    w3 = _dq(inits, nodes, "w3", RNG.integers(-127, 128, (N2, N3)).astype(np.int8),
             (RNG.random(N3) * 0.05 + 1e-3).astype(np.float32), np.zeros(N3, np.int8), axis=1)  # fmt: skip
    inits.append(numpy_helper.from_array(RNG.standard_normal(N3).astype(np.float32), "bias"))
    nodes += [helper.make_node("MatMul", ["x", w1], ["h"]), helper.make_node("Relu", ["h"], ["hr"])]
    x = "hr"
    if len(rows) > 1:  # a batched MatMul (its rows folded into one GEMM), then the Gemms' 2-D input
        inits.append(numpy_helper.from_array(np.array([-1, N1], np.int64), "flat"))
        nodes.append(helper.make_node("Reshape", ["hr", "flat"], ["hf"]))
        x = "hf"
    nodes.append(helper.make_node("Gemm", [x, w2], ["g"], transB=1))
    nodes.append(helper.make_node("Gemm", ["g", w3, "bias"], ["y"]))
    m = int(np.prod(rows))
    graph = helper.make_graph(
        nodes,
        "weight_only",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [*rows, K])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, N3])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), 4 * (K * N1 + N2 * N1 + N2 * N3)


@pytest.mark.parametrize("rows", [(1,), (7,), (2, 9)])
def test_weight_only_keeps_int8_weights_and_matches_onnxruntime(rows, tmp_path):
    onnx_model, float_bytes = _weight_only(rows)
    model = burnedge.load(onnx_model)
    plan = compiler.plan(model, BACKEND)
    art = BACKEND.artifacts(plan)
    assert art.weight_bytes < 0.3 * float_bytes, f"{art.weight_bytes} weight bytes for {float_bytes} float bytes"
    assert emit(plan, "t").source.count("be_gemm_w8_f32(") == 3
    x = RNG.standard_normal((*rows, K)).astype(np.float32)
    # onnxruntime's graph optimisations turn DQ + MatMul into an int8 kernel that quantizes the activations too
    # (1% off here); with them off it runs the model as written: the reference
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = ort.InferenceSession(onnx_model.SerializeToString(), options).run(None, {"x": x})[0]
    tol = 1e-4 * np.abs(want).max()
    for threads in (1, 3):
        got = burnedge.Session(model, backend="c", threads=threads).run({"x": x})["y"]
        assert np.abs(got - want).max() <= tol, f"threads={threads}: {np.abs(got - want).max()} > {tol}"
    bundle = burnedge.export(onnx_model, tmp_path / "w8.bedge", test_vectors=1)
    manifest = burnedge.bundle.read(bundle).manifest
    assert manifest["weight_bytes"] < 0.3 * float_bytes
    got = burnedge.Session(bundle, backend="c").run({"x": x})["y"]
    assert np.abs(got - want).max() <= tol


def test_float_weights_stay_float():
    """Trained-like float weights are no int8 levels: they keep the float GEMM; int8 levels of any scale, zero
    point or a scaled Gemm alpha are recovered bit for bit."""
    w = RNG.standard_normal((96, 80)).astype(np.float32)
    assert int8_columns(w) is None
    assert int8_columns(w.round(1)) is None  # few distinct values, no common step per column
    q = RNG.integers(-128, 128, (96, 80)).astype(np.int8)
    s, z = (RNG.random(80) * 0.1 + 1e-4).astype(np.float32), RNG.integers(-128, 128, 80).astype(np.float32)
    levels = ((q.astype(np.float32) - z) * s).astype(np.float32)
    got = int8_columns(levels)
    assert got is not None
    gq, gs, gz = got
    assert np.array_equal((gq.astype(np.float32) - gz) * gs, levels)
    got_t = int8_columns(np.ascontiguousarray(levels.T), transposed=True)
    assert got_t is not None and np.array_equal((got_t[0].astype(np.float32) - got_t[2]) * got_t[1], levels)
