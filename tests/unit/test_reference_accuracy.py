"""The numpy reference adds up long sums accurately: Conv, reductions, MatMul and normalization statistics.

The pattern that exposed the drift is a constant-Q front end (a pitch tracker's): reflect Pad, a strided Conv
whose 256 windowed-cosine taps cancel on a signal outside their band, power, then Log. Computed in float32 the
reference's Conv was 4e-6 off the exact result relative to its output range, 6x onnxruntime's error, and the Log
carried it on. Oracles: onnx's own ReferenceEvaluator run on the same model in float64 (the exact result of the
float32 weights and input), and onnxruntime in float32.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import burnedge

ort = pytest.importorskip("onnxruntime")

N, TAPS, HOP, BINS = 8192, 256, 128, 36


def _cqt(dtype: int) -> onnx.ModelProto:
    """x [1,1,1,N] -> Pad(reflect) -> Conv (cos and sin taps at 2-8 kHz, stride HOP) -> power -> 10*log10 -> y.

    Outputs y (dB) and c (the Conv). The taps are rounded to float32 in both dtypes: the same model, exactly.
    """
    f = 2000.0 * 2 ** (np.arange(BINS) / 12) / 22050
    t = np.arange(TAPS) - TAPS / 2
    phase = 2 * np.pi * f[:, None] * t
    taps = np.hanning(TAPS) * np.concatenate([np.cos(phase), np.sin(phase)]) / TAPS
    np_dtype = np.float32 if dtype == TensorProto.FLOAT else np.float64
    w = taps.astype(np.float32).astype(np_dtype).reshape(2 * BINS, 1, 1, TAPS)
    inits = [
        numpy_helper.from_array(w, "w"),
        numpy_helper.from_array(np.array([0, 0, 0, TAPS // 2, 0, 0, 0, TAPS // 2], np.int64), "pads"),
        numpy_helper.from_array(np.array([1e-10], np_dtype), "floor"),
        numpy_helper.from_array(np.array([10 / np.log(10)], np_dtype), "db"),
        numpy_helper.from_array(np.array([BINS, BINS], np.int64), "split"),
    ]
    nodes = [
        helper.make_node("Pad", ["x", "pads"], ["xp"], mode="reflect"),
        helper.make_node("Conv", ["xp", "w"], ["c"], strides=[1, HOP]),
        helper.make_node("Mul", ["c", "c"], ["c2"]),
        helper.make_node("Split", ["c2", "split"], ["re2", "im2"], axis=1),
        helper.make_node("Add", ["re2", "im2"], ["power"]),
        helper.make_node("Add", ["power", "floor"], ["floored"]),
        helper.make_node("Log", ["floored"], ["ln"]),
        helper.make_node("Mul", ["ln", "db"], ["y"]),
    ]
    frames = N // HOP + 1
    graph = helper.make_graph(
        nodes,
        "cqt",
        [helper.make_tensor_value_info("x", dtype, [1, 1, 1, N])],
        [
            helper.make_tensor_value_info("y", dtype, [1, BINS, 1, frames]),
            helper.make_tensor_value_info("c", dtype, [1, 2 * BINS, 1, frames]),
        ],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _rel(got: np.ndarray, want: np.ndarray) -> float:
    """max |got - want| / max |want|: the contract's relative error."""
    return float(np.max(np.abs(got.astype(np.float64) - want)) / np.max(np.abs(want)))


def _ort(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)


def test_conv_pad_log_front_end_is_exact_to_float32():
    t = np.arange(N) / 22050
    x = (0.3 * np.sin(2 * np.pi * 440 * t) + 0.2 * np.sin(2 * np.pi * 660 * t * (1 + t / 4))).astype(np.float32)
    x = x.reshape(1, 1, 1, N)
    exact_y, exact_c = ReferenceEvaluator(_cqt(TensorProto.DOUBLE)).run(None, {"x": x.astype(np.float64)})
    ort_y, ort_c = _ort(_cqt(TensorProto.FLOAT), {"x": x})
    got = burnedge.Session(burnedge.load(_cqt(TensorProto.FLOAT)), backend="numpy").run({"x": x})
    # float32 rounding of the result alone is 6e-8 of each value; onnxruntime's float32 sums reach 7e-7
    assert _rel(got["c"], exact_c) < 1e-6, "Conv drifts from the exact sum"
    assert _rel(got["c"], ort_c) < 2e-6, "Conv is further from onnxruntime than onnxruntime is from exact"
    assert _rel(got["y"], exact_y) < 3e-6
    assert _rel(got["y"], ort_y) < 1e-4  # the contract


def _single(op: str, x_shape, attrs: dict, consts: dict) -> onnx.ModelProto:
    inits = [numpy_helper.from_array(v, k) for k, v in consts.items()]
    graph = helper.make_graph(
        [helper.make_node(op, ["x", *consts], ["y"], **attrs)],
        op.lower(),
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize(
    "op, attrs, consts",
    [
        ("ReduceSum", {"keepdims": 0}, {"axes": np.array([0], np.int64)}),
        ("ReduceMean", {"keepdims": 0}, {"axes": np.array([0], np.int64)}),
        ("ReduceSumSquare", {"keepdims": 0}, {"axes": np.array([0], np.int64)}),
        ("LayerNormalization", {"axis": 0}, {"scale": np.ones((20000, 8), np.float32)}),
    ],
)
def test_long_sums_over_a_strided_axis_are_exact_to_float32(op, attrs, consts):
    """20,000 values near 1,000 summed down axis 0: a float32 running sum loses ~1e-6 of the result or more."""
    x = (1000 + np.random.default_rng(0).normal(0, 1, (20000, 8))).astype(np.float32)
    model = _single(op, x.shape, attrs, consts)
    exact = ReferenceEvaluator(model).run(None, {"x": x.astype(np.float64)})[0]
    got = burnedge.Session(burnedge.load(model), backend="numpy").run({"x": x})["y"]
    assert _rel(got, exact) < 1e-6
