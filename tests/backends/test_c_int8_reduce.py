"""int8 reductions on the C backend: ReduceMax / ReduceMin on int8 codes (int8_passthrough, as in a mel
spectrogram front end's max over time) and ReduceMean over the innermost axes (quantize/rules/reduce.py: a
QGlobalAvgPool between reshapes), checked byte for byte against the numpy reference of the int8 graph and, through
quantization, against the float model; ReduceSum stays float with its reason."""

from __future__ import annotations

import math

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge import compiler
from burnedge.quantize import quantize_model

RNG = np.random.default_rng(11)


def _model(reduce_op: str, axes: list[int], keepdims: int = 0, opset: int = 13):
    """x [1,1,40,24] -> Conv 1->8 (3x3, pad 1) -> `reduce_op` over `axes` -> Flatten -> MatMul -> y."""
    w = (RNG.standard_normal((8, 1, 3, 3)) * 0.5).astype(np.float32)
    reduced = [d for i, d in enumerate((1, 8, 40, 24)) if i not in axes or keepdims]
    red_size = math.prod(1 if i in axes else d for i, d in enumerate((1, 8, 40, 24)))
    proj = (RNG.standard_normal((red_size, 6)) * 0.1).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(proj, "proj")]
    if reduce_op == "ReduceSum" or opset >= 18:
        inits.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
        red = helper.make_node(reduce_op, ["r", "axes"], ["m"], keepdims=keepdims)
    else:
        red = helper.make_node(reduce_op, ["r"], ["m"], axes=axes, keepdims=keepdims)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["r"], pads=[1, 1, 1, 1]),
        red,
        helper.make_node("Flatten", ["m"], ["f"], axis=1),
        helper.make_node("MatMul", ["f", "proj"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "reduce_front_end",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 40, 24])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6])],
        inits,
    )
    assert reduced  # the shapes above are consistent
    return burnedge.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]))


def _feeds(n: int) -> list[dict[str, np.ndarray]]:
    return [{"x": np.abs(RNG.standard_normal((1, 1, 40, 24))).astype(np.float32)} for _ in range(n)]


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / math.sqrt((a @ a) * (b @ b)))


@pytest.mark.parametrize(
    ("op", "axes", "int8_op"),
    [
        ("ReduceMax", [3], "ReduceMax"),
        ("ReduceMin", [3], "ReduceMin"),
        ("ReduceMax", [2, 3], "ReduceMax"),  # two blocks: through scratch
        ("ReduceMax", [1], "ReduceMax"),  # a middle axis
        ("ReduceMean", [3], "QGlobalAvgPool"),
        ("ReduceMean", [2, 3], "QGlobalAvgPool"),
    ],
)
def test_int8_reduction_runs_on_c_as_the_reference_does(op, axes, int8_op):
    model = _model(op, axes)
    g8, report = quantize_model(model, _feeds(8), progress=False)
    red = [n for n in g8.nodes if n.op_type == int8_op]
    assert red and all(g8.values[n.inputs[0]].dtype == np.int8 for n in red), [n.op_type for n in g8.nodes]
    assert op not in report.kept_float.values()
    ref = compiler.compile(g8, "numpy").executable
    c = compiler.compile(g8, "c").executable
    fl = burnedge.Session(model)
    for feeds in _feeds(3):  # held out
        want, got = ref.run(feeds)["y"], c.run(feeds)["y"]
        np.testing.assert_array_equal(got, want)  # the int8 graph ends in one DequantizeLinear: bit exact
        assert _cosine(got, fl.run(feeds)["y"]) >= 0.99


def test_int8_reduce_max_keeps_the_input_bytes():
    """The C kernel on int8 codes directly: every code, including -128 and 127, over a middle and a last axis."""
    g = _graph_of_codes()
    x = RNG.integers(-128, 128, (3, 5, 7)).astype(np.int8)
    x[0, 0, :] = -128
    x[1, :, 2] = 127
    got = compiler.compile(g, "c").executable.run({"x": x})
    np.testing.assert_array_equal(got["mx"], x.max(axis=2))
    np.testing.assert_array_equal(got["mn"], x.min(axis=1, keepdims=True))


def _graph_of_codes():
    nodes = [
        helper.make_node("ReduceMax", ["x"], ["mx"], axes=[2], keepdims=0),
        helper.make_node("ReduceMin", ["x"], ["mn"], axes=[1], keepdims=1),
    ]
    g = helper.make_graph(
        nodes,
        "codes",
        [helper.make_tensor_value_info("x", TensorProto.INT8, [3, 5, 7])],
        [
            helper.make_tensor_value_info("mx", TensorProto.INT8, None),
            helper.make_tensor_value_info("mn", TensorProto.INT8, None),
        ],  # fmt: skip
    )
    return burnedge.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])).graph


def test_reduce_mean_over_a_middle_axis_and_reduce_sum_stay_float_with_their_reason():
    for op, axes, why in [("ReduceMean", [2], "not only the innermost"), ("ReduceSum", [3], "sqrt(n)")]:
        g8, report = quantize_model(_model(op, axes), _feeds(4), progress=False)
        assert why in report.kept_float[f"{op}_1"], report.kept_float
        assert op in [n.op_type for n in g8.nodes]
        c = compiler.compile(g8, "c").executable  # and the mixed graph still runs on C
        feeds = _feeds(1)[0]
        np.testing.assert_allclose(c.run(feeds)["y"], compiler.compile(g8, "numpy").executable.run(feeds)["y"],
                                   rtol=1e-5, atol=1e-6)  # fmt: skip
