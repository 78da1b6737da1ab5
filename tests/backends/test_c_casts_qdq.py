"""C backend vs onnxruntime on casts to float64 and on QuantizeLinear / DequantizeLinear with run-time scales and
zero points, per tensor and per axis, to and from int8/uint8/int16/uint16 (shapes the node tests do not cover: odd
sizes, saturating values, more than one thread's worth of elements, 2 threads); float8 and 4-bit
targets: test_c_storage_types.py."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import burnedge

RNG = np.random.default_rng(1717)


def _onnx_type(dt: np.dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dt))


def _model(node, feeds: dict, out_type: int, opset: int = 21):
    ins = [helper.make_tensor_value_info(k, _onnx_type(v.dtype), v.shape) for k, v in feeds.items()]
    graph = helper.make_graph([node], "g", ins, [helper.make_tensor_value_info("y", out_type, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(node, feeds: dict, out_type: int, opset: int = 21) -> None:
    """Runs the one-node model on C with 2 threads; floats must match onnxruntime within 1e-6, integers exactly."""
    proto = _model(node, feeds, out_type, opset)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(["y"], feeds)[0]
    got = burnedge.Session(burnedge.load(proto), backend="c", threads=2).run(feeds)["y"]
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", ["Cast", "CastLike"])
def test_cast_float32_to_float64(op):
    x = (RNG.standard_normal((3, 37)) * 10.0 ** RNG.integers(-30, 30, (3, 37))).astype(np.float32)
    x[0, :4] = [np.inf, -np.inf, np.nan, 0.0]
    feeds = {"x": x}
    if op == "Cast":
        node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.DOUBLE)
    else:
        feeds["like"] = np.zeros(1, np.float64)
        node = helper.make_node("CastLike", ["x", "like"], ["y"])
    _check(node, feeds, TensorProto.DOUBLE)


def _scales(c: int) -> np.ndarray:
    return (RNG.uniform(0.01, 2.0, c)).astype(np.float32)


QTYPES = [np.int8, np.uint8, np.int16, np.uint16]


@pytest.mark.parametrize("qt", QTYPES)
@pytest.mark.parametrize("per_axis", [False, True])
def test_quantize_linear_run_time_params(qt, per_axis):
    shape, axis = (3, 5, 7), 1
    info = np.iinfo(qt)
    c = shape[axis] if per_axis else 1
    x = (RNG.standard_normal(shape) * float(info.max - info.min) * 0.3).astype(np.float32)
    scale = _scales(c)
    scale[0] = 0.5  # exact halves in the first channel round to even (a NaN's result is undefined: none here)
    x.flat[:4] = [0.25, 0.75, -1.25, 1.75]
    zp = RNG.integers(info.min // 2, info.max // 2, c).astype(qt)
    if not per_axis:
        zp, scale = zp.reshape(()), scale.reshape(())
    feeds = {"x": x, "scale": scale, "zp": zp}
    node = helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["y"], axis=axis)
    _check(node, feeds, _onnx_type(qt))


@pytest.mark.parametrize("qt", [*QTYPES, np.int32])
def test_dequantize_linear_run_time_params(qt):
    shape, axis = (2, 9, 11), -1
    info = np.iinfo(qt)
    lo, hi = max(info.min, -(2**20)), min(info.max, 2**20)
    x = RNG.integers(lo, hi, shape, endpoint=True).astype(qt)
    node_in = ["x", "scale"]
    feeds = {"x": x, "scale": _scales(shape[axis])}
    if qt != np.int32:  # int32 DequantizeLinear has no zero point in onnxruntime
        feeds["zp"] = RNG.integers(lo // 2, hi // 2, shape[axis]).astype(qt)
        node_in.append("zp")
    _check(helper.make_node("DequantizeLinear", node_in, ["y"], axis=axis), feeds, TensorProto.FLOAT)


def test_quantize_linear_large_threaded():
    """More elements than the kernels' single-thread threshold, per tensor, with a constant-free graph."""
    x = RNG.standard_normal(70001).astype(np.float32) * 300
    feeds = {"x": x, "scale": np.array(0.37, np.float32), "zp": np.array(30000, np.uint16)}
    _check(helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["y"]), feeds, TensorProto.UINT16)


@pytest.mark.parametrize("qt", [np.int8, np.uint8])
@pytest.mark.parametrize(("sa", "sb"), [((5, 13), (13, 7)), ((3, 9, 33), (33, 17)), ((2, 40, 70), (2, 70, 31))])
def test_qlinear_matmul_run_time_params(qt, sa, sb):
    """Odd sizes, b broadcast over a's batch, and a product big enough to share out between the 2 threads."""
    info = np.iinfo(qt)
    feeds = {
        "a": RNG.integers(info.min, info.max, sa, endpoint=True).astype(qt),
        "a_scale": np.array(0.02, np.float32),
        "a_zp": np.array(RNG.integers(info.min, info.max), qt),
        "b": RNG.integers(info.min, info.max, sb, endpoint=True).astype(qt),
        "b_scale": np.array(0.011, np.float32),
        "b_zp": np.array(RNG.integers(info.min, info.max), qt),
        "y_scale": np.array(0.9, np.float32),
        "y_zp": np.array(RNG.integers(info.min, info.max), qt),
    }
    node = helper.make_node("QLinearMatMul", list(feeds), ["y"])
    _check(node, feeds, _onnx_type(qt))


@pytest.mark.parametrize("qt", QTYPES)
@pytest.mark.parametrize("axis", [1, -1])
def test_blocked_quantize_dequantize(qt, axis):
    """Blocked scales and zero points with a last block shorter than block_size, against onnxruntime."""
    shape, block = (3, 10, 9), 4
    info = np.iinfo(qt)
    ax = axis % len(shape)
    pshape = list(shape)
    pshape[ax] = -(-shape[ax] // block)
    scale = RNG.uniform(0.01, 2.0, pshape).astype(np.float32)
    zp = RNG.integers(info.min // 2, info.max // 2, pshape).astype(qt)
    x = (RNG.standard_normal(shape) * float(info.max - info.min) * 0.3).astype(np.float32)
    q = helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["y"], axis=axis, block_size=block)
    _check(q, {"x": x, "scale": scale, "zp": zp}, _onnx_type(qt))
    xq = RNG.integers(info.min, info.max, shape, endpoint=True).astype(qt)
    dq = helper.make_node("DequantizeLinear", ["x", "scale", "zp"], ["y"], axis=axis, block_size=block)
    _check(dq, {"x": xq, "scale": scale, "zp": zp}, TensorProto.FLOAT)
