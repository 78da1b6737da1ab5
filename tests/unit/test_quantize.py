"""Post-training int8 quantization on small synthetic models: rules, float islands, keep_float, report, data files."""

from __future__ import annotations

import json
import math
import zipfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge.errors import BurnedgeError, InputError
from burnedge.ops._eval import run_graph
from burnedge.quantize import QParams, load_calibration, quantize_model
from burnedge.quantize.rules import add_multipliers, softmax_table


def _model(layernorm: bool = False) -> burnedge.Model:
    """x[1,3,8,8] -> Conv+Relu -> Conv -> +x1 (residual) -> Sigmoid -> GlobalAvgPool -> Flatten -> Gemm -> Softmax."""
    rng = np.random.default_rng(0)
    inits = {
        "w1": rng.standard_normal((8, 3, 3, 3)) * 0.3,
        "b1": rng.standard_normal(8) * 0.1,
        "w2": rng.standard_normal((8, 8, 3, 3)) * 0.15,
        "b2": rng.standard_normal(8) * 0.1,
        "wf": rng.standard_normal((5, 8)),
        "bf": rng.standard_normal(5) * 0.1,
        "ln_s": np.ones(5),
        "ln_b": np.zeros(5),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r1"], ["s"], name="add"),
        helper.make_node("Sigmoid", ["s"], ["g"], name="sigmoid"),
        helper.make_node("GlobalAveragePool", ["g"], ["p"], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["logits"], name="fc", transB=1),
    ]
    last = "logits"
    if layernorm:
        nodes.append(helper.make_node("LayerNormalization", ["logits", "ln_s", "ln_b"], ["n"], name="ln", axis=-1))
        last = "n"
    nodes.append(helper.make_node("Softmax", [last], ["y"], name="softmax", axis=-1))
    graph = helper.make_graph(
        nodes,
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
        [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in inits.items()],
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return burnedge.load(proto)


def _feeds(n: int, seed: int = 0) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [{"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)} for _ in range(n)]


def _ops(graph) -> list[str]:
    return [n.op_type for n in graph.nodes]


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / math.sqrt((a @ a) * (b @ b)))


def test_rules_make_an_int8_graph_that_tracks_float() -> None:
    model = _model()
    g8, report = quantize_model(model, _feeds(16), progress=False)
    ops = _ops(g8)
    assert {"QConv", "QAdd", "QLut", "QGlobalAvgPool", "QMatMul", "QSoftmax"} <= set(ops)
    assert "Conv" not in ops and "FusedConv" not in ops
    assert ops[0] == "QuantizeLinear" and ops[-1] == "DequantizeLinear"  # float at the edges
    assert g8.values["x"].dtype == np.float32 and g8.values["y"].dtype == np.float32
    assert report.kept_float == {}
    ref = burnedge.Session(model)
    for feeds in _feeds(4, seed=99):  # held out
        got = run_graph(g8, [feeds["x"]], {})[0]
        assert _cosine(ref.run(feeds)["y"], got) >= 0.99
    rows = report.accuracy.rows
    assert rows and all(rows[i].sqnr_db <= rows[i + 1].sqnr_db for i in range(len(rows) - 1))  # worst first
    assert report.output_cosine >= 0.99 and report.meets_target()
    assert "QConv" in report.to_text() and "<svg" in report.to_html()


def test_relu_folds_into_the_conv_clamp() -> None:
    g8, report = quantize_model(_model(), _feeds(4), progress=False)
    conv1 = next(n for n in g8.nodes if n.name == "conv1")
    assert conv1.op_type == "QConv" and conv1.attrs["y_min"] == conv1.attrs["y_zero_point"]
    assert not any(n.op_type == "Relu" for n in g8.nodes)


def test_ops_without_a_rule_stay_float_with_qdq_around_and_are_reported() -> None:
    g8, report = quantize_model(_model(layernorm=True), _feeds(8), progress=False)
    ln = next(n for n in g8.nodes if n.name == "ln")
    assert ln.op_type == "LayerNormalization"
    producers = g8.producers()
    assert producers[ln.inputs[0]].op_type == "DequantizeLinear"
    assert "no int8 rule" in report.kept_float["ln"]
    assert "\n  ln: LayerNormalization (no int8 rule)\n" in report.summary()


def test_keep_float_by_name_and_unknown_names() -> None:
    g8, report = quantize_model(_model(), _feeds(4), keep_float=["conv2"], progress=False)
    conv2 = next(n for n in g8.nodes if n.name == "conv2")
    assert conv2.op_type in ("Conv", "FusedConv")
    assert report.kept_float["conv2"] == "user asked"
    with pytest.raises(BurnedgeError, match="no node named 'nope'"):
        quantize_model(_model(), _feeds(2), keep_float=["nope"], progress=False)


def test_keep_float_auto_keeps_layers_until_the_target_is_met() -> None:
    hard = dict(target_cosine=0.999999, keep_float_budget=3, progress=False)
    g8, report = quantize_model(_model(), _feeds(4), keep_float="auto", **hard)
    assert report.auto_kept, "an unreachable target must keep at least one layer in float"
    assert all(report.kept_float[k].startswith("auto:") for k in report.auto_kept)
    _, none = quantize_model(_model(), _feeds(4), keep_float=(), **hard)
    assert report.output_cosine > none.output_cosine  # what auto keeps, it keeps because it measured better
    g_easy, easy = quantize_model(_model(), _feeds(4), keep_float="auto", target_cosine=0.5, progress=False)
    assert easy.auto_kept == []


def _signature(graph) -> list:
    out = []
    for n in graph.nodes:
        attrs = {k: (v.tobytes() if isinstance(v, np.ndarray) else v) for k, v in sorted(n.attrs.items())}
        out.append((n.op_type, n.name, n.inputs, n.outputs, repr(attrs)))
    for name, v in sorted(graph.values.items()):
        out.append((name, v.dtype.name, v.shape, None if v.data is None else v.data.tobytes()))
    return out


@pytest.mark.parametrize("method", ["minmax", "percentile", "entropy", "mse"])
def test_quantization_is_deterministic(method: str) -> None:
    a, _ = quantize_model(_model(), _feeds(6), method=method, progress=False)
    b, _ = quantize_model(_model(), list(reversed(_feeds(6))), method=method, progress=False)
    assert _signature(a) == _signature(b)


def test_session_takes_int8_inputs_the_graph_quantizes_right_away() -> None:
    g8, report = quantize_model(_model(), _feeds(4), progress=False)
    qp = report.inputs["x"]
    assert isinstance(qp, QParams)
    sess = burnedge.Session(burnedge.Model(g8, "tiny8"))
    q = np.random.default_rng(3).integers(-128, 128, (1, 3, 8, 8)).astype(np.int8)
    real = ((q.astype(np.int32) - qp.zero_point) * qp.scale).astype(np.float32)
    np.testing.assert_array_equal(sess.run({"x": q})["y"], sess.run({"x": real})["y"])
    with pytest.raises(InputError, match="dtype"):
        burnedge.Session(_model()).run({"x": q})  # a float model takes no int8


def test_add_multipliers_and_softmax_table() -> None:
    ma, mb, shift = add_multipliers(0.25, 0.625, 0.5)
    assert 2**30 <= max(ma, mb) < 2**31
    assert ma / 2**shift == pytest.approx(0.5, rel=1e-9) and mb / 2**shift == pytest.approx(1.25, rel=1e-9)
    t = softmax_table(0.1)
    assert len(t) == 256 and t[0] == 2**20 and t == sorted(t, reverse=True)


# -- calibration data files ----------------------------------------------------------------------------------------
def test_calibration_files_folder_npz_and_batches(tmp_path) -> None:
    g = _model().graph
    x = np.random.default_rng(0).standard_normal((5, 1, 3, 8, 8)).astype(np.float32)
    np.savez(tmp_path / "batch.npz", x=x)
    assert len(load_calibration(tmp_path / "batch.npz", g)) == 5
    folder = tmp_path / "folder"
    folder.mkdir()
    np.save(folder / "b.npy", x[1])
    np.save(folder / "a.npy", x[0].astype(np.float64))  # converted to float32
    np.savez(folder / "c.npz", x=x[2:4])
    (folder / "notes.txt").write_text("ignored")
    feeds = load_calibration(folder, g)
    assert len(feeds) == 4 and all(f["x"].dtype == np.float32 for f in feeds)
    np.testing.assert_array_equal(feeds[0]["x"], x[0])  # sorted by file name: a, b, c
    np.testing.assert_array_equal(feeds[1]["x"], x[1])


def test_malformed_calibration_data_is_a_clear_error(tmp_path) -> None:
    g = _model().graph
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="holds no .npy or .npz"):
        load_calibration(empty, g)
    np.savez(tmp_path / "missing.npz", y=np.zeros((1, 3, 8, 8), np.float32))
    with pytest.raises(InputError, match="unknown input"):
        load_calibration(tmp_path / "missing.npz", g)
    np.savez(tmp_path / "shape.npz", x=np.zeros((1, 3, 8, 9), np.float32))
    with pytest.raises(InputError, match=r"expected \[1, 3, 8, 8\]"):
        load_calibration(tmp_path / "shape.npz", g)
    with pytest.raises(InputError, match="does not exist"):
        load_calibration(tmp_path / "nothing.npz", g)
    np.savez(tmp_path / "none.npz")
    with pytest.raises(InputError, match="missing input"):
        load_calibration(tmp_path / "none.npz", g)
    with pytest.raises(InputError, match="calibration data is empty"):
        quantize_model(_model(), [], progress=False)
    with pytest.raises(InputError, match="missing input 'x' in calibration batch 1"):
        quantize_model(_model(), [_feeds(1)[0], {}], progress=False)


def test_unknown_method_lists_the_calibrators() -> None:
    with pytest.raises(BurnedgeError, match="available: auto, entropy, minmax, mse, percentile"):
        quantize_model(_model(), _feeds(1), method="magic", progress=False)


def test_onnx_helper_model_is_valid() -> None:
    onnx.checker.check_model(helper.make_model(helper.make_graph([], "g", [], [])))


def test_int8_bundle_keeps_its_float_island(tmp_path) -> None:
    """A layer kept in float stays float in the compiled plan (export does not fold its QDQ pair back to int8)."""
    path = burnedge.export(
        _model(layernorm=True),
        tmp_path / "q.bedge",
        quantize="int8",
        calibration=_feeds(8),
        keep_float=["pool"],
        test_vectors=2,
    )
    checks = burnedge.verify(path)
    assert checks and all(c.ok and c.relative < 1e-6 for c in checks), checks
    plan = json.loads(zipfile.ZipFile(path).read("plan.json"))
    assert any(s["ops"] == ["GlobalAveragePool"] for s in plan["steps"])
    with pytest.raises(burnedge.BurnedgeError, match="(?i)int8 bundle runs on the C backend only"):
        burnedge.Session(path, backend="numpy")
