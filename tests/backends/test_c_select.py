"""C backend vs onnxruntime on CenterCropPad, Compress, EyeLike and OneHot with their shape-deciding inputs
constant (as a user binds them): odd sizes, crop and pad on one axis each, negative axes and indices, 2 threads."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from .c_helpers import ONNX_TYPE, run_c

RNG = np.random.default_rng(3)


def _check(op: str, x: np.ndarray, const: np.ndarray | None, opset: int, out_type=None, **attrs):
    """One `op` node over graph input x and (when given) an initializer `c`, C against onnxruntime."""
    inits = [numpy_helper.from_array(const, "c")] if const is not None else []
    node = helper.make_node(op, ["x", "c"] if const is not None else ["x"], ["y"], **attrs)
    vi = [helper.make_tensor_value_info("x", ONNX_TYPE[x.dtype], x.shape)]
    out = [helper.make_tensor_value_info("y", out_type or ONNX_TYPE[x.dtype], None)]
    graph = helper.make_graph([node], "g", vi, out, initializer=inits)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    want = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(["y"], {"x": x})
    got = run_c(proto, {"x": x})
    assert got.dtype == want[0].dtype and got.shape == want[0].shape, (got.shape, want[0].shape)
    np.testing.assert_array_equal(got, want[0])


@pytest.mark.parametrize("target,axes", [([3, 9, 4], None), ([7, 2], [0, -1]), ([1], [1]), ([6, 10, 5], None)])
def test_center_crop_pad(target, axes):
    x = RNG.standard_normal((5, 7, 6)).astype(np.float32)
    attrs = {} if axes is None else {"axes": axes}
    _check("CenterCropPad", x, np.array(target, np.int64), 18, **attrs)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8"])
def test_compress(axis, dtype):
    x = RNG.integers(0, 100, (4, 5, 6)).astype(dtype)
    n = x.size if axis is None else x.shape[axis]
    cond = RNG.integers(0, 2, n - 1).astype(bool)  # shorter than the axis, as ONNX allows
    cond[0] = True
    _check("Compress", x, cond, 11, **({} if axis is None else {"axis": axis}))


@pytest.mark.parametrize("k", [-3, 0, 2, 9])
def test_eye_like(k):
    x = np.zeros((5, 7), np.float32)
    _check("EyeLike", x, None, 9, out_type=TensorProto.INT32, k=k, dtype=TensorProto.INT32)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("itype", ["int64", "int32", "float32"])
def test_one_hot(axis, itype):
    ind = RNG.integers(-6, 6, (3, 4)).astype(itype)
    depth = np.array([6], np.float32)  # onnxruntime has its (indices, float, float) kernels for all three
    values = np.array([-2.0, 5.5], np.float32)
    proto_inits = [numpy_helper.from_array(depth, "depth"), numpy_helper.from_array(values, "values")]
    node = helper.make_node("OneHot", ["x", "depth", "values"], ["y"], axis=axis)
    vi = [helper.make_tensor_value_info("x", ONNX_TYPE[ind.dtype], ind.shape)]
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    graph = helper.make_graph([node], "g", vi, out, initializer=proto_inits)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    want = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(["y"], {"x": ind})
    np.testing.assert_array_equal(run_c(proto, {"x": ind}), want[0])
