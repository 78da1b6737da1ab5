"""int8 that tells the truth: below the target nothing is written (unless asked), method "auto" keeps the best
measured calibrator from one float pass, keep-float "auto" is the default within a budget, and recurrent models are
calibrated and measured streaming, their int8 state fed back (a synthetic RNN here; the real Silero VAD at the end).
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge.cli import main
from burnedge.errors import BurnedgeError, QuantizationTargetError
from burnedge.exporter import export_int8
from burnedge.quantize import observe, quantize_model
from burnedge.quantize.stream import pair_states
from tests.realmodels.catalog import MODELS
from tests.realmodels.fetch import FetchError, offline
from tests.unit.helpers import save


def _proto(nodes, inputs, outputs, inits, name="m"):
    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in inits.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def cancelling():
    """y = (x W1 + 100) - (x W2 + 100): two large, nearly equal branches; int8 loses their small difference."""
    rng = np.random.default_rng(1)
    w1 = rng.standard_normal((16, 8))
    inits = {"w1": w1, "w2": w1 + 0.05 * rng.standard_normal((16, 8)), "b": np.full(8, 100.0)}
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b"], ["a"], name="left"),
        helper.make_node("Gemm", ["x", "w2", "b"], ["c"], name="right"),
        helper.make_node("Sub", ["a", "c"], ["y"], name="diff"),
    ]
    return _proto(nodes, [("x", [1, 16])], [("y", [1, 8])], inits, "cancel")


def mlp3():
    """x[1,16] -> MatMul -> Relu -> MatMul -> Relu -> MatMul: easy for int8."""
    rng = np.random.default_rng(2)
    inits = {f"w{i}": rng.standard_normal(s) * 0.3 for i, s in enumerate([(16, 32), (32, 32), (32, 4)])}
    nodes = [
        helper.make_node("MatMul", ["x", "w0"], ["h0"], name="fc0"),
        helper.make_node("Relu", ["h0"], ["r0"], name="relu0"),
        helper.make_node("MatMul", ["r0", "w1"], ["h1"], name="fc1"),
        helper.make_node("Relu", ["h1"], ["r1"], name="relu1"),
        helper.make_node("MatMul", ["r1", "w2"], ["y"], name="fc2"),
    ]
    return _proto(nodes, [("x", [1, 16])], [("y", [1, 4])], inits, "mlp3")


def rnn():
    """A one-layer RNN step: hn = tanh(x Wx + h Wh + b), y = sigmoid(hn v); state h <- hn."""
    rng = np.random.default_rng(3)
    inits = {
        "wx": rng.standard_normal((4, 16)) * 0.6,
        "wh": rng.standard_normal((16, 16)) * 0.35,
        "b": rng.standard_normal(16) * 0.1,
        "v": rng.standard_normal((16, 1)),
    }
    nodes = [
        helper.make_node("MatMul", ["x", "wx"], ["xa"], name="input_proj"),
        helper.make_node("MatMul", ["h", "wh"], ["ha"], name="state_proj"),
        helper.make_node("Add", ["xa", "ha"], ["s"], name="mix"),
        helper.make_node("Add", ["s", "b"], ["sb"], name="bias"),
        helper.make_node("Tanh", ["sb"], ["hn"], name="tanh"),
        helper.make_node("MatMul", ["hn", "v"], ["logit"], name="head"),
        helper.make_node("Sigmoid", ["logit"], ["y"], name="prob"),
    ]
    return _proto(nodes, [("x", [1, 4]), ("h", [1, 16])], [("y", [1, 1]), ("hn", [1, 16])], inits, "rnn")


def _feeds(n: int, seed: int = 0, shape=(1, 16)) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [{"x": rng.standard_normal(shape).astype(np.float32)} for _ in range(n)]


# -- 1. below the target: refuse -------------------------------------------------------------------------------------
def test_below_target_raises_names_the_layers_and_writes_no_bundle(tmp_path: Path) -> None:
    out, report = tmp_path / "q.bedge", tmp_path / "r.txt"
    with pytest.raises(QuantizationTargetError) as info:
        export_int8(burnedge.load(cancelling()), out, _feeds(16), report=report, progress=False)
    message = str(info.value)
    assert "\n" not in message and "< 0.99" in message, message
    assert "right" in message or "left" in message, message  # a layer by name, with its SQNR
    assert "--keep-float" in message and "--allow-below-target" in message and "--method" in message
    assert "no bundle written" in message and str(report) in message
    assert not out.exists() and list(tmp_path.iterdir()) == [report]  # nothing half-written; the report is there
    rep = info.value.report
    assert not rep.meets_target() and f"{rep.output_cosine:.4f}" in message
    assert "NOT met" in report.read_text()


def test_allow_below_target_writes_the_bundle_with_a_warning(tmp_path: Path) -> None:
    with pytest.warns(UserWarning, match="below its target"):
        path, rep = export_int8(
            burnedge.load(cancelling()), tmp_path / "q.bedge", _feeds(16), allow_below_target=True, progress=False
        )
    assert path.is_file() and not rep.meets_target()
    assert burnedge.bundle.read(path).manifest["quantization"]["target_met"] is False


def test_cli_below_target_exits_non_zero_without_a_bundle_then_allow_writes_it(tmp_path: Path, capsys) -> None:
    model = save(cancelling(), tmp_path / "cancel.onnx")
    np.save(tmp_path / "cal.npy", np.stack([f["x"] for f in _feeds(16)]))
    out = tmp_path / "q.bedge"
    argv = ["quantize", str(model), "-o", str(out), "--calibration", str(tmp_path / "cal.npy")]
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and "misses its target" in err and "--allow-below-target" in err, err
    assert "model output: cosine" in captured.out  # the report is printed all the same
    assert not out.exists()
    assert main(["export", str(model), "-o", str(out), "--quantize", "int8", "--calibration", argv[-1]]) == 2
    assert not out.exists()
    assert main([*argv, "--allow-below-target"]) == 0
    assert out.is_file() and "written anyway" in capsys.readouterr().err


def test_validation_data_is_what_the_target_is_measured_on(tmp_path: Path, capsys) -> None:
    """Held-out inputs outside the calibration's range: measured on them the same int8 graph misses the target
    that it meets on the calibration batches, so the export refuses (API and CLI --validation)."""
    model, calibration = burnedge.load(mlp3()), _feeds(8)
    held = [{"x": f["x"] * 6} for f in _feeds(4, seed=9)]  # six times the calibrated range: int8 clips
    path, rep = export_int8(model, tmp_path / "ok.bedge", calibration, keep_float=(), progress=False)
    assert rep.meets_target() and rep.validation_batches == len(calibration)
    with pytest.raises(QuantizationTargetError) as info:
        export_int8(model, tmp_path / "no.bedge", calibration, keep_float=(), validation=held, progress=False)
    assert info.value.report.validation_batches == len(held) and not (tmp_path / "no.bedge").exists()
    onnx_path = save(mlp3(), tmp_path / "m.onnx")
    np.save(tmp_path / "cal.npy", np.stack([f["x"] for f in calibration]))
    np.save(tmp_path / "val.npy", np.stack([f["x"] for f in held]))
    argv = ["quantize", str(onnx_path), "-o", str(tmp_path / "c.bedge"), "--calibration", str(tmp_path / "cal.npy")]
    assert main([*argv, "--keep-float", "none"]) == 0
    assert main([*argv, "--keep-float", "none", "--validation", str(tmp_path / "val.npy")]) == 2
    assert "misses its target" in capsys.readouterr().err
    assert main([*argv, "--validation", str(tmp_path / "missing")]) == 2  # bad input: one line naming it
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"validation data {tmp_path / 'missing'} does not exist" in err


# -- 2. method auto ----------------------------------------------------------------------------------------------------
def test_auto_keeps_the_best_measured_method_from_one_float_pass(monkeypatch) -> None:
    calibration = _feeds(12, seed=0)
    calibration[0]["x"][0, 0] = 60.0  # one outlier: clipping calibrators should gain
    validation = _feeds(6, seed=7)
    runs = []
    real = observe.observe_floats
    monkeypatch.setattr(observe, "observe_floats", lambda *a, **k: runs.append(1) or real(*a, **k))
    model = burnedge.load(mlp3())
    g_auto, auto = quantize_model(model, calibration, validation=validation, keep_float=(), progress=False)
    assert len(runs) == len(calibration)  # the float graph ran once per batch for all four calibrators
    assert set(auto.tried) == {"minmax", "percentile", "entropy", "mse"}
    assert auto.method == max(auto.tried, key=lambda m: auto.tried[m])
    for method, cosine in auto.tried.items():  # each figure is what that method alone measures
        g, alone = quantize_model(
            model, calibration, method=method, validation=validation, keep_float=(), progress=False
        )
        assert alone.output_cosine == pytest.approx(cosine, abs=1e-12), method
        if method == auto.method:
            assert [n.attrs for n in g.nodes] == [n.attrs for n in g_auto.nodes]
    assert auto.tried["minmax"] < auto.output_cosine  # the outlier hurts minmax: auto did better
    assert f"method {auto.method} (auto, the best measured of minmax" in auto.summary()


# -- 3. keep-float auto by default, within a budget --------------------------------------------------------------------
def test_keep_float_auto_is_the_default_within_its_budget() -> None:
    model = burnedge.load(cancelling())
    _, rep = quantize_model(model, _feeds(16), progress=False)
    assert rep.keep_float_budget == 1  # 10 % of the 2 int8 computing layers, rounded up
    assert len(rep.auto_kept) == 1 and rep.kept_float[rep.auto_kept[0]].startswith("auto:")
    assert "auto kept 1 of a budget of 1" in rep.summary()
    _, three = quantize_model(model, _feeds(16), keep_float_budget=3, progress=False)
    assert 1 <= len(three.auto_kept) <= 3 and three.output_cosine >= rep.output_cosine
    _, off = quantize_model(model, _feeds(16), keep_float=(), progress=False)
    assert off.auto_kept == [] and off.keep_float_budget is None
    _, zero = quantize_model(model, _feeds(16), keep_float_budget=0, progress=False)
    assert zero.auto_kept == []
    with pytest.raises(BurnedgeError, match="keep_float_budget"):
        quantize_model(model, _feeds(2), keep_float_budget=1.5, progress=False)


def test_cli_keep_float_none_and_budget(tmp_path: Path, capsys) -> None:
    model = save(cancelling(), tmp_path / "cancel.onnx")
    np.save(tmp_path / "cal.npy", np.stack([f["x"] for f in _feeds(16)]))
    base = ["quantize", str(model), "-o", str(tmp_path / "q.bedge"), "--calibration", str(tmp_path / "cal.npy")]
    assert main([*base, "--keep-float", "none", "--allow-below-target"]) == 0
    assert "auto" not in capsys.readouterr().out.split("kept in float:")[1].split("\n")[0]
    assert main([*base, "--keep-float-budget", "50%", "--allow-below-target"]) == 0
    assert "auto kept 1 of a budget of 1" in capsys.readouterr().out
    assert main([*base, "--keep-float-budget", "lots"]) == 2
    assert "--keep-float-budget 'lots'" in capsys.readouterr().err


def test_an_int8_tensor_with_two_float_readers_is_dequantized_once_for_both() -> None:
    """Keeping layers float (auto, by default) gives int8 tensors several float readers (YOLOv8n: a Split output
    read by a kept-float Conv and a float Add); the second reader got the int8 tensor itself."""
    rng = np.random.default_rng(0)
    inits = {"w": rng.standard_normal((8, 16)) * 0.3, "s": np.ones(16), "b": np.zeros(16)}
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="fc"),
        helper.make_node("LayerNormalization", ["h", "s", "b"], ["y1"], name="ln1", axis=-1),
        helper.make_node("LayerNormalization", ["h", "s", "b"], ["y2"], name="ln2", axis=-1, epsilon=1e-3),
    ]
    model = burnedge.load(_proto(nodes, [("x", [1, 8])], [("y1", [1, 16]), ("y2", [1, 16])], inits, "two"))
    g8, rep = quantize_model(model, _feeds(8, shape=(1, 8)), method="minmax", keep_float=(), progress=False)
    lns = [n for n in g8.nodes if n.op_type == "LayerNormalization"]
    assert len(lns) == 2 and lns[0].inputs[0] == lns[1].inputs[0] == "h/float"
    assert rep.output_cosine > 0.999


# -- 4. recurrent models: state pairs, streaming ---------------------------------------------------------------------
def test_state_pairs_by_name_and_explicit_pairs_are_checked() -> None:
    g = burnedge.load(rnn()).graph
    assert pair_states(g) == {"h": "hn"}
    assert pair_states(g, "none") == {} and pair_states(g, None) == {}
    assert pair_states(g, {"h": "hn"}) == {"h": "hn"} and pair_states(g, ["h=hn"]) == {"h": "hn"}
    with pytest.raises(BurnedgeError, match="shape"):
        pair_states(g, {"h": "y"})
    with pytest.raises(BurnedgeError, match="not an input"):
        pair_states(g, {"nope": "hn"})
    auto_enc = _proto(
        [helper.make_node("Relu", ["input"], ["output"], name="r")], [("input", [1, 4])], [("output", [1, 4])], {}
    )
    assert pair_states(burnedge.load(auto_enc).graph) == {}  # "input"/"output" of one shape: no state


def _stream(run, frames, state):
    """Runs `run(feeds) -> outputs` frame by frame, each frame fed the previous frame's hn; returns y per frame."""
    h, ys = state, []
    for f in frames:
        out = run({"x": f["x"], "h": h})
        ys.append(out["y"])
        h = out["hn"]
    return ys


def _measures(want, got):
    a = np.concatenate([w.ravel() for w in want]).astype(np.float64)
    b = np.concatenate([g.ravel() for g in got]).astype(np.float64)
    return a @ b / math.sqrt((a @ a) * (b @ b)), float(np.max(np.abs(a - b)))


def test_streaming_measurement_feeds_the_int8_state_back() -> None:
    model = burnedge.load(rnn())
    frames = _feeds(40, seed=5, shape=(1, 4))
    g8, rep = quantize_model(model, frames, method="minmax", keep_float=(), progress=False)
    assert rep.state == {"h": "hn"} and rep.validation_batches == 40 and "h <- hn" in rep.summary()
    zeros = np.zeros((1, 16), np.float32)
    f32, i8 = burnedge.Session(model), burnedge.Session(burnedge.Model(g8, "rnn8"))
    want = _stream(f32.run, frames, zeros)
    cos, err = _measures(want, _stream(i8.run, frames, zeros))  # what a user streaming the int8 graph sees
    row = {r.tensor: r for r in rep.accuracy.rows}["y"]
    assert row.cosine == pytest.approx(cos, abs=1e-9) and row.max_abs_error == pytest.approx(err, rel=1e-6)
    # the same int8 graph measured the old way, each frame given the float state
    hs, h = [], zeros
    for f in frames:
        hs.append(h)
        h = f32.run({"x": f["x"], "h": h})["hn"]
    fed = [{"x": f["x"], "h": s} for f, s in zip(frames, hs)]
    g_old, old = quantize_model(
        model, fed, method="minmax", keep_float=(), state=None, report_batches=40, progress=False
    )
    assert [n.attrs for n in g_old.nodes] == [n.attrs for n in g8.nodes]  # same ranges: only the measurement differs
    old_row = {r.tensor: r for r in old.accuracy.rows}["y"]
    assert old_row.max_abs_error != pytest.approx(row.max_abs_error, rel=1e-3)
    assert old_row.max_abs_error < row.max_abs_error  # the fed-back int8 state drifts further


def test_cli_state_takes_a_stream_of_frames_without_the_state(tmp_path: Path, capsys) -> None:
    model = save(rnn(), tmp_path / "rnn.onnx")
    np.save(tmp_path / "frames.npy", np.stack([f["x"] for f in _feeds(40, seed=5, shape=(1, 4))]))
    out = tmp_path / "rnn.bedge"
    base = ["quantize", str(model), "-o", str(out), "--calibration", str(tmp_path / "frames.npy")]
    assert main([*base, "--state", "h=hn", "--allow-below-target"]) == 0
    text = capsys.readouterr().out
    assert "40 calibration batch(es), measured on 40" in text and "state h <- hn fed back" in text
    assert burnedge.bundle.read(out).manifest["quantization"]["state"] == {"h": "hn"}
    assert main([*base, "--state", "none"]) == 2  # without the state, the .npy must feed both inputs
    assert "a .npy file feeds a model with one input" in capsys.readouterr().err


# -- the real Silero VAD (faster-whisper's copy), streamed in chunks of 4 frames ------------------------------------
@pytest.fixture(scope="module")
def silero_vad() -> Path:
    """The model of the real-model suite (tests/realmodels: pip download of faster-whisper==1.2.1, cached); a fetch
    that fails fails the test, unless BURNEDGE_OFFLINE=1 skips it."""
    try:
        return MODELS["silero_vad_v6_sequence"].path()
    except FetchError as exc:
        (pytest.skip if offline() else pytest.fail)(f"silero_vad_v6: {exc}")


def speechlike(seconds: float, seed: int) -> np.ndarray:
    """16 kHz audio alternating voiced syllables (harmonics of a wavering pitch under three formants), noise
    bursts and near silence: what a microphone gives a VAD, better than white noise."""
    rng, sr = np.random.default_rng(seed), 16000
    t = np.arange(int(seconds * sr)) / sr
    out, pos = np.zeros_like(t), 0.0
    while pos < seconds:
        dur = rng.uniform(0.2, 0.6)
        kind = rng.choice(["silence", "voiced", "voiced", "noise"])
        m = (t >= pos) & (t < pos + dur)
        tt = t[m] - pos
        if kind == "voiced":
            f0 = rng.uniform(100, 220) * (1 + 0.05 * np.sin(2 * np.pi * 5 * tt))
            phase = 2 * np.pi * np.cumsum(f0) / sr
            formants = rng.uniform([500, 1200, 2400], [900, 1800, 3200])
            sig = sum(
                np.sin(k * phase) * sum(np.exp(-(((k * f0 - f) / 150) ** 2)) for f in formants) for k in range(1, 30)
            )
            sig = sig * np.sin(np.pi * tt / dur) ** 0.5
            out[m] = 0.3 * sig / (np.abs(sig).max() + 1e-9)
        else:
            out[m] = (0.05 if kind == "noise" else 0.002) * rng.standard_normal(int(m.sum()))
        pos += dur
    return out.astype(np.float32)


def vad_chunks(audio: np.ndarray, n: int) -> np.ndarray:
    """faster-whisper's framing: 512-sample frames, each with the previous frame's last 64 samples in front,
    grouped n frames per model call: shape [calls, n, 576]."""
    frames = audio[: len(audio) // 512 * 512].reshape(-1, 512)
    x = np.concatenate([np.concatenate([np.zeros((1, 64), np.float32), frames[:-1, -64:]]), frames], 1)
    return x[: len(x) // n * n].reshape(-1, n, 576)


def test_silero_vad_streaming_figure_is_what_the_bundle_gives(silero_vad: Path, tmp_path: Path) -> None:
    ort = pytest.importorskip("onnxruntime")
    chunks = vad_chunks(speechlike(8, 0), 4)
    calibration = [{"input": c} for c in chunks]
    with warnings.catch_warnings():  # below the target or not, the figure must be the streamed one
        warnings.simplefilter("ignore", UserWarning)
        out, rep = export_int8(
            silero_vad, tmp_path / "vad.bedge", calibration, input_shapes={"input": (4, 576)},
            allow_below_target=True, test_vectors=0, progress=False,
        )  # fmt: skip
    assert rep.state == {"h": "hn", "c": "cn"} and rep.validation_batches == len(chunks)
    # a user's loop: onnxruntime in float, the bundle's C library in int8, each fed its own state
    sess = ort.InferenceSession(str(silero_vad), providers=["CPUExecutionProvider"])
    lib = burnedge.Session(out)
    h = c = hq = cq = np.zeros((1, 1, 128), np.float32)
    want, got, float_states = [], [], []
    for x in chunks:
        float_states.append((h, c))
        p, h, c = sess.run(None, {"input": x, "h": h, "c": c})
        r = lib.run({"input": x, "h": hq, "c": cq})
        want.append(p)
        got.append(r["speech_probs"])
        hq, cq = r["hn"], r["cn"]
    cos, err = _measures(want, got)
    row = {r.tensor: r for r in rep.accuracy.rows}["speech_probs"]
    # the report ran the numpy reference (float64 sums), the user's loop the C library (float32), each feeding its
    # own state back 60 times: they agree to 2e-4 in cosine, 25 times closer than the float-state figure below
    assert row.cosine == pytest.approx(cos, abs=2e-4) and row.max_abs_error == pytest.approx(err, abs=2e-3)
    # measured the old way (the float state given to every call), int8 looks better than it streams
    fed = [{"input": x, "h": s[0], "c": s[1]} for x, s in zip(chunks, float_states)]
    model = burnedge.load(silero_vad, input_shapes={"input": (4, 576)})
    keep = list(rep.auto_kept)
    _, old = quantize_model(
        model, fed, method=rep.method, keep_float=keep, state=None, report_batches=len(fed), progress=False
    )
    old_row = {r.tensor: r for r in old.accuracy.rows}["speech_probs"]
    assert old_row.cosine != pytest.approx(row.cosine, abs=2e-3)
    assert old_row.cosine > row.cosine
