"""int8 that cannot overflow: dead filters (max|w| ~ 1e-13 after BatchNorm folding) with a bias quantize, export,
verify and track float; a layer whose int32 accumulators can overflow stays float with the reason in the report;
the weight-scale floor and the accumulator bound (burnedge/quantize/accumulators.py) hold on extreme weights."""

from __future__ import annotations

import math

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge.ops.fixedpoint import INT32_MAX, INT32_MIN
from burnedge.quantize import activation_qparams, quantize_model, weight_qparams
from burnedge.quantize.accumulators import REL_FLOOR, accumulator_range, int8_weights, overflow_reason, weight_floor
from burnedge.quantize.qdq import explain, import_qdq

SHAPE = (1, 3, 10, 10)


def _load(nodes, inits, out_shape, in_shape=SHAPE) -> burnedge.Model:
    graph = helper.make_graph(
        nodes,
        "dead",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(in_shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(out_shape))],
        [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in inits.items()],
    )
    return burnedge.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def _dead_cnn(kind: str) -> burnedge.Model:
    """x -> Conv 3->8 (+BN) -> Relu -> depthwise Conv -> Relu -> GlobalAvgPool -> Flatten -> Gemm -> y [1, 4].

    "direct": channel 2 of the first conv has weights ~1e-13 and bias 0.5; "bn": the first conv's weights are
    ordinary and a BatchNormalization with gain 1e-12 on channel 2 (beta 0.5) kills it when folded; the depthwise
    conv's channel 5 and the Gemm's column 1 are dead too, with a non-zero bias.
    """
    rng = np.random.default_rng(1)
    w1 = rng.standard_normal((8, 3, 3, 3)) * 0.3
    b1 = rng.standard_normal(8) * 0.1
    b1[2] = 0.5
    if kind == "direct":
        w1[2] = rng.standard_normal((3, 3, 3)) * 1e-13
    wd = rng.standard_normal((8, 1, 3, 3)) * 0.5
    wd[5] = 1e-13
    bd = rng.standard_normal(8) * 0.1
    bd[5] = -0.3
    wf = rng.standard_normal((4, 8))
    wf[1] = rng.standard_normal(8) * 1e-14
    bf = np.array([0.1, 0.7, -0.2, 0.0])
    inits = {"w1": w1, "b1": b1, "wd": wd, "bd": bd, "wf": wf, "bf": bf}
    first = "c1"
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1])]
    if kind == "bn":
        gain = np.abs(rng.standard_normal(8)) + 0.5
        gain[2] = 1e-12
        inits.update(g=gain, beta=rng.standard_normal(8) * 0.1, mean=rng.standard_normal(8) * 0.1, var=np.ones(8))
        inits["beta"][2] = 0.5
        nodes.append(helper.make_node("BatchNormalization", ["c1", "g", "beta", "mean", "var"], ["bn"], name="bn1"))
        first = "bn"
    nodes += [
        helper.make_node("Relu", [first], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "wd", "bd"], ["c2"], name="dw", group=8, pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["p"], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1),
    ]
    return _load(nodes, inits, (1, 4))


def _feeds(n: int, seed: int) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [{"x": rng.standard_normal(SHAPE).astype(np.float32)} for _ in range(n)]


def _cosine(pairs) -> float:
    num = aa = bb = 0.0
    for a, b in pairs:
        a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
        num, aa, bb = num + a @ b, aa + a @ a, bb + b @ b
    return num / math.sqrt(aa * bb)


@pytest.mark.parametrize("kind", ["direct", "bn"])
def test_dead_filters_quantize_and_track_float(kind: str) -> None:
    """Used to fail in QConv: 'accumulators [..., 2147509933] overflow int32' (the dead channel's bias)."""
    g8, report = quantize_model(_dead_cnn(kind), _feeds(16, 0), progress=False)
    ops = [n.op_type for n in g8.nodes]
    assert ops.count("QConv") == 2 and "QMatMul" in ops, ops
    assert report.kept_float == {}, report.kept_float
    assert report.output_cosine >= 0.99, report.summary()
    for node in g8.nodes:
        if node.op_type in ("QConv", "QMatMul") and len(node.inputs) > 2:
            bias = g8.values[node.inputs[2]].data
            assert bias.dtype == np.int32 and np.abs(bias.astype(np.int64)).max() < 2**30  # never saturated


def test_dead_filters_export_verify_and_run_in_c(tmp_path) -> None:
    model = _dead_cnn("bn")
    path = burnedge.export(model, tmp_path / "dead.bedge", quantize="int8", calibration=_feeds(16, 0))
    checks = burnedge.verify(path)
    assert checks and all(c.ok for c in checks), checks
    ref, c8 = burnedge.Session(model), burnedge.Session(path)
    held_out = _feeds(8, 7)
    cos = _cosine((ref.run(f)["y"], c8.run(f)["y"]) for f in held_out)
    assert cos >= 0.99, cos


def test_a_layer_whose_accumulators_overflow_stays_float_with_the_reason() -> None:
    """80000 weights of full scale on an input near the top of its range: 255 * 127 * 80000 > 2^31 even bias-free.

    Used to fail in QMatMul with 'accumulators [...] overflow int32'.
    """
    k = 80000
    model = _load(
        [helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="wide")],
        {"w": np.ones((k, 2)), "b": np.zeros(2)},
        (1, 2),
        (1, k),
    )
    rng = np.random.default_rng(0)
    feeds = [{"x": rng.uniform(0.95, 1.0, (1, k)).astype(np.float32)} for _ in range(4)]
    g8, report = quantize_model(model, feeds, progress=False)
    assert "QMatMul" not in [n.op_type for n in g8.nodes]
    (why,) = report.kept_float.values()
    assert "int32 accumulators can overflow" in why and "80000 weights" in why, why
    assert "int32 accumulators can overflow" in report.summary()
    assert report.output_cosine > 0.9999  # the float layer reads the dequantized input only


def test_floor_rule_on_extreme_channels() -> None:
    """Step by step: the relative floor, the bias floor, and the proof on the emitted integers."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((6, 4, 3, 3)).astype(np.float32)
    w[1] *= 1e-13  # dead after BN folding
    w[2] = 0.0  # exactly zero
    w[3] *= 1e-6  # tiny but alive, no bias to protect
    bias = np.array([0.1, 0.5, -3.0, 0.0, 2e4, -0.2], np.float32)  # channel 4: a bias that dwarfs its weights
    qp_x = activation_qparams(0.0, 0.05)
    plain = weight_qparams(w)
    floor = weight_floor(w, bias, qp_x)
    largest = float(np.delete(plain.scale, 2).max())  # the zero channel's plain scale is 1
    assert np.all(floor >= REL_FLOOR * largest * (1 - 1e-6))
    wq, wqp, qb = int8_weights(w, bias, qp_x)
    assert wqp.scale[0] == plain.scale[0] and wqp.scale[5] == plain.scale[5]  # ordinary channels keep their scale
    assert wqp.scale[1] > 1e3 * plain.scale[1] and wqp.scale[4] > plain.scale[4]
    lo, hi = accumulator_range(wq, qb, qp_x)
    assert lo.min() >= INT32_MIN and hi.max() <= INT32_MAX
    assert np.abs(qb.astype(np.int64)).max() <= (INT32_MAX - 255 * np.abs(wq.astype(np.int64)).sum((1, 2, 3))).min()
    # the old scheme: the dead channel's bias saturated int32 (and overflowed the accumulator beside the weights)
    old = np.rint(bias.astype(np.float64) / (float(qp_x.scale) * plain.scale.astype(np.float64)))
    assert abs(old[1]) > INT32_MAX


def test_accumulator_range_is_exact_at_the_extremes() -> None:
    """The bound is attained: x at qmax where w > 0 and at qmin where w < 0 (and the reverse)."""
    rng = np.random.default_rng(4)
    wq = rng.integers(-127, 128, (5, 40)).astype(np.int8)
    bq = rng.integers(-(2**20), 2**20, 5).astype(np.int32)
    qp_x = activation_qparams(-0.3, 1.7)
    lo, hi = accumulator_range(wq, bq, qp_x)
    w = wq.astype(np.int64)
    d_lo, d_hi = qp_x.qmin - qp_x.zero_point, qp_x.qmax - qp_x.zero_point
    assert np.array_equal(hi, (np.where(w > 0, d_hi, d_lo) * w).sum(1) + bq)
    assert np.array_equal(lo, (np.where(w > 0, d_lo, d_hi) * w).sum(1) + bq)
    xs = rng.integers(d_lo, d_hi + 1, (200, 40))
    acc = xs @ w.T + bq
    assert np.all(acc >= lo) and np.all(acc <= hi)
    assert overflow_reason(wq, bq, qp_x) is None
    big = np.full((2, 70000), 127, np.int8)
    assert "overflow" in overflow_reason(big, None, activation_qparams(0.0, 1.0))


def test_ordinary_weights_keep_their_plain_scales() -> None:
    """The floor changes nothing on ordinary layers: the same bytes as before."""
    rng = np.random.default_rng(5)
    w = rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.2
    b = rng.standard_normal(16).astype(np.float32) * 0.1
    wq, wqp, _ = int8_weights(w, b, activation_qparams(-2.0, 3.0))
    assert wqp == weight_qparams(w)
    mm = rng.standard_normal((8, 5)).astype(np.float32)
    _, mqp, _ = int8_weights(mm, None, activation_qparams(-1.0, 1.0), axis=1)
    assert mqp == weight_qparams(mm, axis=1)


def test_a_qdq_conv_whose_accumulators_can_overflow_stays_float() -> None:
    """An imported QDQ model fixes its own scales: a bias near 2^31 cannot be floored, so the island stays float.

    Used to import as a QConv that failed with 'accumulators [...] overflow int32' when run.
    """
    rng = np.random.default_rng(6)
    s_x, s_w = np.float32(0.05), np.full(4, 0.01, np.float32)
    inits = {
        "w_q": rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8),
        "w_s": s_w,
        "w_zp": np.zeros(4, np.int8),
        "b_q": np.array([10, 2**31 - 2**10, -5, 0], np.int32),  # exact in float32
        "b_s": (s_x * s_w).astype(np.float32),
        "x_s": np.array(s_x, np.float32),
        "x_zp": np.array(0, np.int8),
        "y_s": np.array(1e4, np.float32),
        "y_zp": np.array(0, np.int8),
    }
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_s", "x_zp"], ["xq"], name="x_quant"),
        helper.make_node("DequantizeLinear", ["xq", "x_s", "x_zp"], ["xd"], name="x_dequant"),
        helper.make_node("DequantizeLinear", ["w_q", "w_s", "w_zp"], ["w"], name="w_dequant", axis=0),
        helper.make_node("DequantizeLinear", ["b_q", "b_s"], ["b"], name="b_dequant", axis=0),
        helper.make_node("Conv", ["xd", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["c", "y_s", "y_zp"], ["cq"], name="y_quant"),
        helper.make_node("DequantizeLinear", ["cq", "y_s", "y_zp"], ["y"], name="y_dequant"),
    ]
    graph = helper.make_graph(
        nodes,
        "qdq_overflow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SHAPE))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 10, 10])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    model = burnedge.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    notes = explain(model.graph)
    assert any(n.startswith("Conv 'conv' stays in float: its int32 accumulators can overflow") for n in notes), notes
    g = import_qdq(model.graph.copy())
    assert "QConv" not in [n.op_type for n in g.nodes]
    burnedge.Session(burnedge.Model(g, "qdq_overflow")).run(_feeds(1, 3)[0])  # runs: the conv is float
