"""C backend on the storage types computed in float (float16, bfloat16, float8, float4e2m1, int4/int2): casts
from float32 bit for bit against numpy / ml_dtypes on values the node tests do not hold (ties, subnormals,
out-of-range values, NaN and infinities; saturate on and off), float16 arithmetic against numpy's float16, and
QuantizeLinear to int4 / float8 per axis with run-time scales against onnxruntime (2 threads, odd sizes)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge

RNG = np.random.default_rng(1717)
TYPES = {
    "float16": (TensorProto.FLOAT16, np.float16),
    "bfloat16": (TensorProto.BFLOAT16, ml_dtypes.bfloat16),
    "float8_e4m3fn": (TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
    "float8_e4m3fnuz": (TensorProto.FLOAT8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz),
    "float8_e5m2": (TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2),
    "float8_e5m2fnuz": (TensorProto.FLOAT8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz),
    "float4_e2m1fn": (TensorProto.FLOAT4E2M1, ml_dtypes.float4_e2m1fn),
}


def _values() -> np.ndarray:
    """float32 values over every range the small types cover, with exact ties between neighbours."""
    bits = RNG.integers(0, 1 << 32, 3001, dtype=np.uint64).astype(np.uint32)
    wide = bits.view(np.float32)
    wide = wide[np.isfinite(wide)] * np.float32(1e-30)  # most land inside the float8 / float16 ranges
    ties = np.array([0.5, 1.5, 2.5, 3.5, 5.0, 7.0, 464.0, 232.0, 61440.0, 65520.0, 1.0009765625], np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-8, -1e-8, 448.0, 480.0, 1e6, -1e6], np.float32)
    return np.concatenate([wide, RNG.standard_normal(777).astype(np.float32) * 100, ties, -ties, special])


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint16 if a.dtype.itemsize == 2 else np.uint8)


def test_casts_from_float32_match_ml_dtypes_bit_for_bit():
    x = _values()
    nodes, outs, want = [], [], {}
    for name, (enum, dt) in TYPES.items():
        for sat in (1, 0) if "float8" in name else (1,):
            y = f"{name}_s{sat}"
            nodes.append(helper.make_node("Cast", ["x"], [y], to=enum, saturate=sat))
            outs.append(helper.make_tensor_value_info(y, enum, x.shape))
            top = np.float32(ml_dtypes.finfo(dt).max)
            src = np.where(np.isnan(x), x, np.clip(x, -top, top)) if sat and "float8" in name else x
            with np.errstate(over="ignore", invalid="ignore"):
                want[y] = src.astype(dt)
    for name, enum in (("int4", TensorProto.INT4), ("uint2", TensorProto.UINT2)):
        nodes.append(helper.make_node("Cast", ["x"], [name], to=enum))
        outs.append(helper.make_tensor_value_info(name, enum, x.shape))
    graph = helper.make_graph(nodes, "casts", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)], outs)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    got = burnedge.Session(burnedge.load(proto), backend="c", threads=2).run({"x": x})
    for y, w in want.items():
        g = got[y]
        assert g.dtype == w.dtype, (y, g.dtype)
        nan = np.isnan(w.astype(np.float32))
        np.testing.assert_array_equal(np.isnan(g.astype(np.float32)), nan, err_msg=y)
        np.testing.assert_array_equal(_bits(g)[~nan], _bits(w)[~nan], err_msg=y)
    # int4 / uint2: truncate toward zero and wrap (the ONNX tests' rule); NaN and infinities give 0
    finite = np.where(np.isfinite(x), x, 0).astype(np.float64)
    for y, bits, signed in (("int4", 4, True), ("uint2", 2, False)):
        wrapped = np.fmod(np.trunc(finite), 2.0**bits).astype(np.int64) & (2**bits - 1)
        if signed:
            wrapped = np.where(wrapped >= 2 ** (bits - 1), wrapped - 2**bits, wrapped)
        np.testing.assert_array_equal(got[y].astype(np.int64), wrapped, err_msg=y)


def test_float16_arithmetic_matches_numpy_float16():
    a = (RNG.standard_normal((7, 129)) * 300).astype(np.float16)
    b = (RNG.standard_normal((1, 129)) * 3).astype(np.float16)
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT16, v.shape) for n, v in (("a", a), ("b", b))]
    nodes = [
        helper.make_node("Mul", ["a", "b"], ["m"]),
        helper.make_node("Add", ["m", "a"], ["s"]),
        helper.make_node("Max", ["s", "b"], ["y"]),
    ]
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT16, a.shape)]
    proto = helper.make_model(helper.make_graph(nodes, "f16", ins, out), opset_imports=[helper.make_opsetid("", 17)])
    got = burnedge.Session(burnedge.load(proto), backend="c", threads=2).run({"a": a, "b": b})["y"]
    want = np.maximum(a * b + a, b)  # numpy rounds every float16 op to float16
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("to", [TensorProto.INT4, TensorProto.UINT4, TensorProto.FLOAT8E4M3FN])
def test_quantize_linear_per_axis_to_small_types_matches_onnxruntime(to):
    x = (RNG.standard_normal((3, 5, 37)) * 20).astype(np.float32)
    scale = RNG.uniform(0.05, 2.0, 5).astype(np.float32)
    node = helper.make_node("QuantizeLinear", ["x", "scale"], ["y"], axis=1, output_dtype=to)
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape) for n, v in (("x", x), ("scale", scale))]
    feeds = {"x": x, "scale": scale}
    graph = helper.make_graph([node], "q", ins, [helper.make_tensor_value_info("y", to, x.shape)])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    got = burnedge.Session(burnedge.load(proto), backend="c", threads=2).run(feeds)["y"]
    # onnxruntime returns no int4 arrays to Python: it casts its result to float32 first
    widen = helper.make_node("Cast", ["y"], ["z"], to=TensorProto.FLOAT)
    ort_graph = helper.make_graph(
        [node, widen], "q", ins, [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)]
    )
    ort_proto = helper.make_model(ort_graph, opset_imports=[helper.make_opsetid("", 21)])
    sess = ort.InferenceSession(ort_proto.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(["z"], feeds)[0]
    assert got.dtype == helper.tensor_dtype_to_np_dtype(to)
    np.testing.assert_array_equal(got.astype(np.float32), want)


def test_float16_matmul_and_softmax_are_widened_to_float32():
    """Ops without a float16 kernel run their float32 kernel between exact widening and rounding."""
    a = RNG.standard_normal((3, 17, 33)).astype(np.float16)
    b = (RNG.standard_normal((33, 19)) * 0.3).astype(np.float16)
    nodes = [helper.make_node("MatMul", ["a", "b"], ["m"]), helper.make_node("Softmax", ["m"], ["y"], axis=-1)]
    ins = [helper.make_tensor_value_info("a", TensorProto.FLOAT16, a.shape)]
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT16, (3, 17, 19))]
    graph = helper.make_graph(nodes, "f16", ins, out, initializer=[numpy_helper.from_array(b, "b")])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(["y"], {"a": a})[0]
    got = burnedge.Session(burnedge.load(proto), backend="c", threads=2).run({"a": a})["y"]
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=1e-3)


def test_bundle_with_float8_and_int4_outputs_verifies_its_own_vectors(tmp_path):
    """Test vectors keep the manifest's types: .npz returns ml_dtypes arrays as raw bytes, read back typed."""
    nodes = [
        helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT8E4M3FN),
        helper.make_node("Cast", ["y"], ["z"], to=TensorProto.INT4),
    ]
    outs = [
        helper.make_tensor_value_info("y", TensorProto.FLOAT8E4M3FN, [3, 5]),
        helper.make_tensor_value_info("z", TensorProto.INT4, [3, 5]),
    ]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5])], outs)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    path = burnedge.export(burnedge.load(proto), tmp_path / "m.bedge", test_vectors=2)
    checks = burnedge.verify(path)
    assert len(checks) == 4 and all(c.ok for c in checks), checks
