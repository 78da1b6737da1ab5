"""Already-quantized models: QDQ islands and QLinear ops become burnedge int8 ops and match onnxruntime.

The model tests quantize suite models with onnxruntime's own `quantize_static` (QDQ, per-channel int8 weights)
and compare burnedge's numpy int8 run with onnxruntime's in the integer domain of the final DequantizeLinear:
at most one quantization step apart.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge import compiler
from burnedge.ir import Graph
from burnedge.ops.fixedpoint import add_multipliers
from burnedge.passes import DEFAULT_PIPELINE, optimize
from burnedge.quantize.qdq import explain, has_qdq, import_qdq
from burnedge.quantize.qdq.params import exact_int8
from tests.models import suite

ort = pytest.importorskip("onnxruntime")
import onnxruntime.quantization as quantization  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CALIBRATION_SEEDS = range(4)
HELD_OUT_SEEDS = range(100, 106)


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = os.environ.get("BURNEDGE_MODEL_CACHE")
    return Path(env) if env else tmp_path_factory.mktemp("models")


def _ort(model: onnx.ModelProto | str | Path, optimized: bool = True):
    so = ort.SessionOptions()
    if not optimized:  # no QDQ fusion: onnxruntime evaluates the QDQ graph in float, as written
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else str(model)
    return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])


def _run(graph, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    out = compiler.compile(graph, "numpy").executable.run(feeds)
    return [out[n] for n in graph.outputs]


# -- helpers ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("top", [127, 63])
def test_exact_int8_finds_the_integers_behind_dequantized_weights(top):
    rng = np.random.default_rng(0)
    q = rng.integers(-top, top + 1, size=(8, 3, 3, 3))
    q[:, 0, 0, 0] = np.where(rng.random(8) < 0.5, top, -top)  # each channel reaches |q| = top
    q[5] = 0  # a channel of zeros
    s = (rng.random(8) * 1e-2 + 1e-4).astype(np.float32)
    w = q.astype(np.float32) * s.reshape(-1, 1, 1, 1)  # what DequantizeLinear computes, then the importer folds
    found = exact_int8(w, 0)
    assert found is not None
    q8, s8 = found
    assert q8.dtype == np.int8 and np.abs(q8.astype(int)).max() <= 127
    np.testing.assert_array_equal(q8.astype(np.float32) * s8.reshape(-1, 1, 1, 1), w)  # bit for bit
    if top == 127:
        np.testing.assert_array_equal(q8[[0, 1, 2, 3, 4, 6, 7]], q[[0, 1, 2, 3, 4, 6, 7]])
        np.testing.assert_array_equal(s8[[0, 1, 2, 3, 4, 6, 7]], s[[0, 1, 2, 3, 4, 6, 7]])


def test_exact_int8_refuses_float_and_wide_asymmetric_weights():
    rng = np.random.default_rng(1)
    assert exact_int8(rng.standard_normal((4, 16)).astype(np.float32), 0) is None
    wide = (rng.integers(0, 256, size=(4, 16)) - 40).astype(np.float32) * np.float32(0.01)  # uint8, zp 40
    wide[:, 0] = 215 * np.float32(0.01)
    assert exact_int8(wide, 0) is None


def test_add_multipliers_put_the_larger_in_range():
    a, b, shift = add_multipliers(0.75, 0.3, 1.0)  # float32 scales: s_b / s_y is float32(0.3)
    assert 2**30 <= max(a, b) < 2**31 and shift >= 1
    assert abs(a / 2**shift - 0.75) < 2**-30 and abs(b / 2**shift - float(np.float32(0.3))) < 2**-30
    with pytest.raises(ValueError, match="too far apart"):
        add_multipliers(1e-30, 1e-30, 1.0)


def _import(graph: Graph) -> Graph:
    """What the compiler runs on a QDQ graph: QDQ import, then the default passes."""
    assert has_qdq(graph)
    return optimize(import_qdq(graph), DEFAULT_PIPELINE)


# -- small hand-written QDQ models -------------------------------------------------------------------------------
def _qdq_model(act: int, weight_zero_point: int = 0) -> onnx.ModelProto:
    """x -> Q/DQ -> Conv(per-channel int8 weights, int32 bias) -> Relu -> Q/DQ -> Sigmoid -> Q/DQ -> MaxPool
    -> Q/DQ -> Add(itself's other branch) -> Q/DQ -> y, activations of type `act` (INT8 or UINT8)."""
    rng = np.random.default_rng(3)
    npt = np.int8 if act == TensorProto.INT8 else np.uint8
    off = 0 if act == TensorProto.INT8 else 128
    w = rng.integers(-127, 128, size=(6, 3, 3, 3)).astype(np.int8)
    if weight_zero_point:  # uint8 weights with a zero point: q - zp spans more than [-127, 127]
        w = rng.integers(0, 256, size=(6, 3, 3, 3)).astype(np.uint8)
    ws = (rng.random(6) * 0.01 + 0.002).astype(np.float32)
    b = rng.integers(-2000, 2000, size=6).astype(np.int32)
    inits = [
        numpy_helper.from_array(w, "w_q"),
        numpy_helper.from_array(ws, "w_s"),
        numpy_helper.from_array(np.full(6, weight_zero_point, w.dtype), "w_zp"),
        numpy_helper.from_array(b, "b_q"),
        numpy_helper.from_array((np.float32(0.05) * ws).astype(np.float32), "b_s"),
    ]
    params = {"x": (0.05, 3), "c": (0.04, -128), "s": (1 / 255, -128), "m": (1 / 255, -128), "a": (0.01, -100)}
    for k, (s, z) in params.items():
        inits += [numpy_helper.from_array(np.array(s, np.float32), f"{k}_s")]
        inits += [numpy_helper.from_array(np.array(z + off, npt), f"{k}_zp")]

    def qdq(src: str, k: str) -> list[onnx.NodeProto]:
        return [
            helper.make_node("QuantizeLinear", [src, f"{k}_s", f"{k}_zp"], [f"{k}_q"], name=f"{k}_quant"),
            helper.make_node("DequantizeLinear", [f"{k}_q", f"{k}_s", f"{k}_zp"], [f"{k}_dq"], name=f"{k}_dequant"),
        ]

    nodes = [
        *qdq("x", "x"),
        helper.make_node("DequantizeLinear", ["w_q", "w_s", "w_zp"], ["w"], axis=0),
        helper.make_node("DequantizeLinear", ["b_q", "b_s"], ["b"], axis=0),
        helper.make_node("Conv", ["x_dq", "w", "b"], ["conv"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["relu"], name="relu"),
        *qdq("relu", "c"),
        helper.make_node("Sigmoid", ["c_dq"], ["sig"], name="sigmoid"),
        *qdq("sig", "s"),
        helper.make_node("MaxPool", ["s_dq"], ["pool"], name="maxpool", kernel_shape=[2, 2], strides=[1, 1]),
        *qdq("pool", "m"),
        helper.make_node("Slice", ["c_dq", "st", "en"], ["crop"], name="crop"),
        helper.make_node("Add", ["m_dq", "crop"], ["sum"], name="add"),
        *qdq("sum", "a"),
    ]
    nodes[-1].output[0] = "y"
    inits += [numpy_helper.from_array(np.array([0, 0, 0, 0], np.int64), "st")]
    inits += [numpy_helper.from_array(np.array([1, 6, 7, 7], np.int64), "en")]
    # the Slice reads c_dq in float: a float op between a DequantizeLinear and ... the Add's DequantizeLinear-less
    # input, so the Add stays in float (a note) while every other island becomes int8
    g = helper.make_graph(
        nodes,
        "qdq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, 7, 7])],
        inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("act", [TensorProto.INT8, TensorProto.UINT8], ids=["int8", "uint8"])
def test_qdq_islands_become_int8_ops(act):
    model = _qdq_model(act)
    graph = burnedge.load(model).graph
    feeds = {"x": np.random.default_rng(5).standard_normal((1, 3, 8, 8), np.float32)}
    float_out = _run(graph.copy(), feeds)
    g = _import(graph.copy())
    ops = Counter(n.op_type for n in g.nodes)
    assert ops["QConv"] == 1 and ops["QLut"] == 1 and ops["MaxPool"] == 1
    assert "Conv" not in ops and "Sigmoid" not in ops and "Relu" not in ops
    qconv = next(n for n in g.nodes if n.op_type == "QConv")
    assert qconv.attrs["y_min"] == -128 and qconv.attrs["y_max"] == 127  # Relu: Q(0) = zp = -128 is the floor
    pool = next(n for n in g.nodes if n.op_type == "MaxPool")
    assert g.values[pool.inputs[0]].dtype == np.int8
    assert any("Add 'add' stays in float" in line for line in explain(graph))
    step = 0.01
    (got,), (want,) = _run(g, feeds), float_out
    assert np.abs(np.rint(got / step) - np.rint(want / step)).max() <= 1
    (ref,) = _ort(model, optimized=False).run(None, feeds)
    assert np.abs(np.rint(got / step) - np.rint(ref / step)).max() <= 1


def test_relu_folds_into_the_conv_clamp():
    model = _qdq_model(TensorProto.INT8)
    for init in model.graph.initializer:  # move the conv output's zero point to 10: the Relu floor becomes 10
        if init.name == "c_zp":
            init.CopyFrom(numpy_helper.from_array(np.array(10, np.int8), "c_zp"))
    g = _import(burnedge.load(model).graph)
    qconv = next(n for n in g.nodes if n.op_type == "QConv")
    assert qconv.attrs["y_min"] == 10 and qconv.origin[-2:] == [("Relu", "relu"), ("QuantizeLinear", "c_quant")]


def test_weights_that_are_not_int8_keep_the_island_in_float():
    model = _qdq_model(TensorProto.UINT8, weight_zero_point=40)
    graph = burnedge.load(model).graph
    notes = explain(graph)
    assert any(line.startswith("Conv 'conv' stays in float: its weights are not int8") for line in notes)
    g = _import(graph.copy())
    assert Counter(n.op_type for n in g.nodes)["Conv"] + Counter(n.op_type for n in g.nodes)["FusedConv"] == 1
    feeds = {"x": np.random.default_rng(6).standard_normal((1, 3, 8, 8), np.float32)}
    (got,), (ref,) = _run(g, feeds), _ort(model, optimized=False).run(None, feeds)
    assert np.abs(np.rint(got / 0.01) - np.rint(ref / 0.01)).max() <= 1


def _qlinear_model(act: int, wmax: int = 127) -> onnx.ModelProto:
    """QLinearConv (uint8 or int8 activations, int8 per-channel weights in [-wmax, wmax]) -> QLinearMatMul ->
    DequantizeLinear."""
    rng = np.random.default_rng(7)
    npt, off = (np.int8, 0) if act == TensorProto.INT8 else (np.uint8, 128)
    inits = [
        numpy_helper.from_array(np.array(0.05, np.float32), "xs"),
        numpy_helper.from_array(np.array(3 + off, npt), "xz"),
        numpy_helper.from_array(rng.integers(-wmax, wmax + 1, size=(4, 2, 3, 3)).astype(np.int8), "w"),
        numpy_helper.from_array((rng.random(4) * 0.02 + 0.001).astype(np.float32), "ws"),
        numpy_helper.from_array(np.zeros(4, np.int8), "wz"),
        numpy_helper.from_array(np.array(0.1, np.float32), "ys"),
        numpy_helper.from_array(np.array(-5 + off, npt), "yz"),
        numpy_helper.from_array(rng.integers(-500, 500, size=4).astype(np.int32), "b"),
        numpy_helper.from_array(rng.integers(-wmax, wmax + 1, size=(6, 5)).astype(np.int8), "m"),
        numpy_helper.from_array(np.array(0.02, np.float32), "ms"),
        numpy_helper.from_array(np.array(0, np.int8), "mz"),
        numpy_helper.from_array(np.array(0.2, np.float32), "zs"),
        numpy_helper.from_array(np.array(1 + off, npt), "zz"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["yq"], name="qconv"),
        helper.make_node("QLinearMatMul", ["yq", "ys", "yz", "m", "ms", "mz", "zs", "zz"], ["zq"], name="qmm"),
        helper.make_node("DequantizeLinear", ["zq", "zs", "zz"], ["z"]),
    ]
    g = helper.make_graph(
        nodes,
        "qlinear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8, 8])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4, 6, 5])],
        inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize(("act", "wmax"), [(TensorProto.INT8, 127), (TensorProto.UINT8, 127), (TensorProto.UINT8, 63)])
def test_qlinear_ops_become_qconv_and_qmatmul(act, wmax):
    model = _qlinear_model(act, wmax)
    graph = burnedge.load(model).graph
    g = _import(graph.copy())
    ops = Counter(n.op_type for n in g.nodes)
    assert ops["QConv"] == 1 and ops["QMatMul"] == 1 and "QLinearConv" not in ops and "QLinearMatMul" not in ops
    feeds = {"x": np.random.default_rng(8).standard_normal((1, 2, 8, 8), np.float32)}
    (got,), (spec,) = _run(g, feeds), _run(graph, feeds)  # the QLinear* numpy references: ONNX's integer spec
    assert np.abs(np.rint(got / 0.2) - np.rint(spec / 0.2)).max() <= 1
    if act == TensorProto.INT8 or wmax <= 63:
        # onnxruntime's x86 u8s8 kernels add pairs of u8*s8 products in saturating int16 (VPMADDUBSW): with
        # uint8 activations it is only exact for 7-bit weights (what its quantizer's reduce_range is for)
        (ref,) = _ort(model).run(None, feeds)
        assert np.abs(np.rint(got / 0.2) - np.rint(ref / 0.2)).max() <= 1


# -- onnxruntime's quantize_static on suite models ----------------------------------------------------------------
def _quantized(name: str, cache: Path, tmp: Path, activation: str, reduce_range: bool, preprocess: bool) -> Path:
    """`name` from the suite, quantized by onnxruntime: QDQ, per-channel int8 weights, calibrated by MinMax."""
    src = suite.build_model(name, cache)
    path = src
    if preprocess:  # what onnxruntime recommends before quantize_static: shape inference, Conv+BN fusion ...
        path = tmp / f"{name}_pre.onnx"
        quantization.shape_inference.quant_pre_process(str(src), str(path))

    class Reader(quantization.CalibrationDataReader):
        def __init__(self) -> None:
            self.feeds = iter([suite.example_feeds(src, s) for s in CALIBRATION_SEEDS])

        def get_next(self):
            return next(self.feeds, None)

    out = tmp / f"{name}_{activation}.onnx"
    quantization.quantize_static(
        str(path),
        str(out),
        Reader(),
        quant_format=quantization.QuantFormat.QDQ,
        per_channel=True,
        reduce_range=reduce_range,
        weight_type=quantization.QuantType.QInt8,
        activation_type=getattr(quantization.QuantType, activation),
    )
    return out


def _output_step(model: onnx.ModelProto) -> float:
    """The scale of the DequantizeLinear writing the (first) graph output."""
    last = next(n for n in model.graph.node if n.output[0] == model.graph.output[0].name)
    assert last.op_type == "DequantizeLinear"
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    return float(inits[last.input[1]])


CASES = [
    # name, activation type, reduce_range, preprocess, compare with onnxruntime's fused int8 kernels too
    ("resnet8", "QInt8", False, True, True),
    ("ds_cnn", "QInt8", False, True, True),
    ("resnet8", "QUInt8", True, True, True),
    ("ds_cnn", "QUInt8", True, True, True),
    # uint8 activations x int8 weights at full range: onnxruntime's x86 u8s8 kernels sum pairs of u8*s8 products
    # in saturating int16 (VPMADDUBSW), which is why its quantizer offers reduce_range; compared with
    # onnxruntime's float evaluation of the same QDQ graph instead
    ("resnet8", "QUInt8", False, True, False),
    # no pre-processing: BatchNormalization sits in its own QDQ island
    ("resnet8", "QInt8", False, False, True),
]


@pytest.mark.parametrize(("name", "activation", "reduce_range", "preprocess", "fused"), CASES)
def test_onnxruntime_qdq_model_matches_onnxruntime(name, activation, reduce_range, preprocess, fused, model_cache,
                                                   tmp_path):  # fmt: skip
    path = _quantized(name, model_cache, tmp_path, activation, reduce_range, preprocess)
    model = onnx.load(str(path))
    step = _output_step(model)
    graph = burnedge.load(path).graph
    g = _import(graph.copy())
    ops = Counter(n.op_type for n in g.nodes)
    float_ops = Counter(n.op_type for n in model.graph.node if n.op_type not in ("QuantizeLinear", "DequantizeLinear"))
    assert ops["QConv"] == float_ops["Conv"] + float_ops["BatchNormalization"] > 0
    assert ops["QMatMul"] == float_ops["Gemm"] + float_ops["MatMul"]
    assert not {"Conv", "FusedConv", "Gemm", "FusedGemm", "Add", "AveragePool"} & set(ops)
    # float only at the edges, and around the final Softmax: onnxruntime gives it the calibrated scale 1/255,
    # QSoftmax writes 1/256, and a QRequant after it would round twice (up to 2 steps from onnxruntime's result)
    assert ops["QuantizeLinear"] == ops["DequantizeLinear"] == 1 + ops["Softmax"] and ops["Softmax"] <= 1
    assert all(" stays in float: its output scale 0.00392157 " in line for line in explain(graph))
    # onnxruntime's int8 kernels (fused QLinearConv, QGemm ...) and its float evaluation of the same QDQ graph;
    # note: on AVX2 onnxruntime turns int8 activations into uint8 (QDQS8ToU8) and its u8 x s8 kernels saturate
    # pairs of products to int16, so on other inputs ds_cnn can come out 2 steps from its own float evaluation
    sessions = {"onnxruntime int8": _ort(path), "onnxruntime float QDQ": _ort(path, optimized=False)}
    if not fused:
        del sessions["onnxruntime int8"]
    src = suite.build_model(name, model_cache)
    for seed in HELD_OUT_SEEDS:
        feeds = suite.example_feeds(src, seed)
        (got,) = _run(g, feeds)
        for what, session in sessions.items():
            (want,) = session.run(None, feeds)
            steps = np.abs(np.rint(got.astype(np.float64) / step) - np.rint(want.astype(np.float64) / step))
            assert steps.max() <= 1, f"seed {seed}: {steps.max()} steps from {what}"


def test_softmax_at_its_native_scale_becomes_qsoftmax():
    inits = [
        numpy_helper.from_array(np.array(0.1, np.float32), "xs"),
        numpy_helper.from_array(np.array(-3, np.int8), "xz"),
        numpy_helper.from_array(np.array(1 / 256, np.float32), "ys"),
        numpy_helper.from_array(np.array(-128, np.int8), "yz"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("Softmax", ["xd"], ["p"], name="softmax", axis=-1),
        helper.make_node("QuantizeLinear", ["p", "ys", "yz"], ["pq"]),
        helper.make_node("DequantizeLinear", ["pq", "ys", "yz"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "softmax",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 10])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 10])],
        inits,
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    graph = _import(burnedge.load(model).graph)
    assert [n.op_type for n in graph.nodes] == ["QuantizeLinear", "QSoftmax", "DequantizeLinear"]
    feeds = {"x": np.random.default_rng(9).standard_normal((3, 10)).astype(np.float32) * 3}
    (got,), (ref,) = _run(graph, feeds), _ort(model, optimized=False).run(None, feeds)
    assert np.abs(np.rint(got * 256) - np.rint(ref * 256)).max() <= 1


def test_a_chain_of_one_tensor_ops_becomes_one_table():
    """GELU as onnxruntime quantizes it: DQ -> Div -> Erf -> Q, the Div left unquantized, is one QLut."""
    inits = [numpy_helper.from_array(np.array(v, t), n) for n, v, t in
             [("xs", 0.05, np.float32), ("xz", 7, np.int8), ("ys", 1 / 127, np.float32), ("yz", 0, np.int8),
              ("r2", 1.4142135, np.float32)]]  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("Div", ["xd", "r2"], ["h"], name="div"),
        helper.make_node("Erf", ["h"], ["e"], name="erf"),
        helper.make_node("QuantizeLinear", ["e", "ys", "yz"], ["eq"]),
        helper.make_node("DequantizeLinear", ["eq", "ys", "yz"], ["y"]),
    ]
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [4, 50]) for n in ("x", "y")]
    model = helper.make_model(helper.make_graph(nodes, "gelu", io[:1], io[1:], inits), opset_imports=[
        helper.make_opsetid("", 13)])  # fmt: skip
    graph = _import(burnedge.load(model).graph)
    assert [n.op_type for n in graph.nodes] == ["QuantizeLinear", "QLut", "DequantizeLinear"]
    feeds = {"x": np.random.default_rng(2).standard_normal((4, 50)).astype(np.float32) * 3}
    (got,), (ref,) = _run(graph, feeds), _ort(model, optimized=False).run(None, feeds)
    assert np.abs(np.rint(got * 127) - np.rint(ref * 127)).max() <= 1
