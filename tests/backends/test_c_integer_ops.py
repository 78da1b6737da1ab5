"""C backend vs onnxruntime on ConvInteger, QLinearConv and MatMulInteger: signed and unsigned operands, per-channel
zero points and scales, bias, pads, strides, dilations, groups, 1-D to 3-D, weights as run-time inputs; bad
parameters are one-line errors naming the node."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import burnedge
from burnedge.backends.c.lower import LowerError

from .c_helpers import check_node, one_node_model

RNG = np.random.default_rng(17)


def _q(dtype, *shape):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


CONV_CASES = [  # (x shape, w shape, attributes)
    ((1, 3, 7, 6), (4, 3, 3, 3), dict(pads=[1, 1, 1, 1])),
    ((2, 4, 9, 8), (6, 2, 3, 2), dict(group=2, strides=[2, 1], dilations=[1, 2], pads=[1, 0, 2, 1])),
    ((1, 4, 11), (4, 1, 3), dict(group=4, auto_pad="SAME_UPPER", strides=[2])),
    ((1, 2, 4, 5, 3), (3, 2, 2, 3, 1), dict(pads=[0, 1, 0, 1, 0, 0])),
]


def _reference(node, feeds: dict, out_type) -> np.ndarray:
    """The numpy reference's output, for what onnxruntime does not run."""
    return burnedge.Session(burnedge.load(one_node_model(node, feeds, out_type, 10))).run(feeds)["y"]


def _onnx_reference(node, feeds: dict, out_type) -> np.ndarray:
    """onnx's own reference evaluator, for uint8 x int8 products: onnxruntime's u8s8 kernels on x86 CPUs with AVX2
    but no VNNI sum pairs of products in int16 with saturation (vpmaddubsw), so its results there depend on the
    machine (seen: 10 of 16 such cases off on an AVX2-only EPYC, 2026-12-04); the exact result is the spec's."""
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(one_node_model(node, feeds, out_type, 10)).run(None, feeds)[0]


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
@pytest.mark.parametrize("types", [(np.uint8, np.uint8), (np.uint8, np.int8)], ids=["u8u8", "u8i8"])
def test_conv_integer(case, types):
    xs, ws, attrs = CONV_CASES[case]
    xt, wt = types
    feeds = {"x": _q(xt, *xs), "w": _q(wt, *ws), "xz": _q(xt), "wz": _q(wt)}
    node = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], **attrs)
    check_node(node, feeds, 10, TensorProto.INT32)


@pytest.mark.parametrize("case", [0, 1])
def test_conv_integer_per_channel_zero_points(case):
    """Against the reference: onnxruntime takes only per-tensor weight zero points here."""
    xs, ws, attrs = CONV_CASES[case]
    feeds = {"x": _q(np.int8, *xs), "w": _q(np.uint8, *ws), "xz": _q(np.int8), "wz": _q(np.uint8, ws[0])}
    node = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], **attrs)
    check_node(node, feeds, 10, TensorProto.INT32, want=_reference(node, feeds, TensorProto.INT32))


def test_conv_integer_without_zero_points():
    feeds = {"x": _q(np.uint8, 1, 2, 5, 5), "w": _q(np.uint8, 3, 2, 3, 3)}
    check_node(helper.make_node("ConvInteger", ["x", "w"], ["y"], strides=[2, 2]), feeds, 10, TensorProto.INT32)


QLINEAR_TYPES = [(np.uint8, np.uint8, np.uint8), (np.int8, np.int8, np.int8), (np.uint8, np.int8, np.uint8)]


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
@pytest.mark.parametrize("types", QLINEAR_TYPES, ids=["u8", "i8", "u8i8"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["tensor", "channel"])
def test_qlinear_conv(case, types, per_channel):
    xs, ws, attrs = CONV_CASES[case]
    xt, wt, yt = types
    m = ws[0]
    k = int(np.prod(ws[1:]))
    nw = m if per_channel else 1
    feeds = {
        "x": _q(xt, *xs), "xs": np.array(0.05, np.float32), "xz": _q(xt),
        "w": _q(wt, *ws), "ws": RNG.uniform(0.01, 0.05, nw).astype(np.float32), "wz": _q(wt, nw) // 8,
        "ys": np.array(0.02 * k, np.float32), "yz": _q(yt), "b": RNG.integers(-2000, 2000, m).astype(np.int32),
    }  # fmt: skip
    if wt == np.int8:  # onnxruntime takes int8 weights only with zero points of 0
        feeds["wz"] = np.zeros(nw, np.int8)
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"], **attrs)
    out = helper.np_dtype_to_tensor_dtype(np.dtype(yt))
    want = None
    if (xt, wt) == (np.uint8, np.int8):  # onnx's evaluator takes 2-D QLinearConv only (1-D: a wrong shape)
        want = _onnx_reference(node, feeds, out) if len(xs) == 4 else _reference(node, feeds, out)
    check_node(node, feeds, 10, out, want=want)


def test_qlinear_conv_of_constant_weights_without_bias():
    x = _q(np.uint8, 1, 3, 6, 6)
    w = _q(np.uint8, 2, 3, 3, 3)
    inits = [helper.make_tensor("w", TensorProto.UINT8, w.shape, w.reshape(-1).tolist()),
             helper.make_tensor("wz", TensorProto.UINT8, [], [128])]  # fmt: skip
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"], pads=[1, 1, 1, 1])
    feeds = {"x": x, "xs": np.array(0.1, np.float32), "xz": np.array(3, np.uint8), "ws": np.array(0.02, np.float32),
             "ys": np.array(0.7, np.float32), "yz": np.array(100, np.uint8)}  # fmt: skip
    proto = one_node_model(node, feeds, TensorProto.UINT8, 10)
    proto.graph.initializer.extend(inits)
    want = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got = burnedge.Session(burnedge.load(proto), backend="c").run(feeds)["y"]
    np.testing.assert_array_equal(got, want)


MATMUL_CASES = [((5, 7), (7, 3)), ((2, 4, 6), (6, 5)), ((3, 1, 2, 8), (3, 8, 4)), ((1, 9), (9, 1))]


@pytest.mark.parametrize("case", range(len(MATMUL_CASES)))
@pytest.mark.parametrize("types", [(np.uint8, np.uint8), (np.int8, np.int8), (np.uint8, np.int8)])
def test_matmul_integer(case, types):
    """A 2-D B takes a zero point per column (onnxruntime takes those only for a 2-D B)."""
    sa, sb = MATMUL_CASES[case]
    at, bt = types
    feeds = {"a": _q(at, *sa), "b": _q(bt, *sb), "az": _q(at), "bz": _q(bt, sb[-1]) if len(sb) == 2 else _q(bt)}
    node = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    want = _onnx_reference(node, feeds, TensorProto.INT32) if types == (np.uint8, np.int8) else None
    check_node(node, feeds, 10, TensorProto.INT32, want=want)


def test_matmul_integer_per_row_zero_points():
    """Against the reference: onnxruntime takes only a per-tensor zero point for A."""
    feeds = {"a": _q(np.int8, 6, 5), "b": _q(np.uint8, 5, 4), "az": _q(np.int8, 6), "bz": _q(np.uint8, 4)}
    node = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    check_node(node, feeds, 10, TensorProto.INT32, want=_reference(node, feeds, TensorProto.INT32))


def _error(node, feeds, out_type) -> str:
    with pytest.raises(LowerError) as exc:
        burnedge.Session(burnedge.load(one_node_model(node, feeds, out_type, 10)), backend="c")
    return str(exc.value)


def test_bad_parameters_name_the_node():
    """Parameters the reference takes but the C kernels do not: a zero point per batch and row, a zero point of
    another type than its tensor (ONNX asks for the same type)."""
    feeds = {"a": _q(np.uint8, 2, 4, 3), "b": _q(np.uint8, 3, 2), "az": _q(np.uint8, 2, 4, 1)}
    msg = _error(helper.make_node("MatMulInteger", ["a", "b", "az"], ["y"], name="mm"), feeds, TensorProto.INT32)
    assert "'mm' (MatMulInteger)" in msg and "a_zero_point has 8 values, expected 1 or 4" in msg
    feeds = {"x": _q(np.uint8, 1, 2, 5, 5), "w": _q(np.uint8, 3, 2, 3, 3), "xz": _q(np.int8)}
    msg = _error(helper.make_node("ConvInteger", ["x", "w", "xz"], ["y"], name="ci"), feeds, TensorProto.INT32)
    assert "'ci' (ConvInteger)" in msg and "x_zero_point is int8, expected uint8" in msg
    assert "\n" not in msg


def test_matmul_integer_zero_points_shaped_per_row_and_column():
    """[M, 1] and [1, N] zero points (ONNX's N-D form) are per row and per column too."""
    feeds = {"a": _q(np.uint8, 5, 3), "b": _q(np.int8, 3, 4), "az": _q(np.uint8, 5, 1), "bz": _q(np.int8, 1, 4)}
    node = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    check_node(node, feeds, 10, TensorProto.INT32, want=_reference(node, feeds, TensorProto.INT32))
