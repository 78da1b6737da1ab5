"""The CLI and API gaps users hit at once (issue 10, item 4): --bind, export(bind=...), one-line user errors,
lossless dtype conversion and shapes from the .npy in `run`, scalar inputs through test vectors, verify's summary,
emulate's order of checks, the ops table, natural calibration batches."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge import bundle
from burnedge.cli import main

from .helpers import mlp, mlp_reference, save


def branch_model() -> onnx.ModelProto:
    """y = x * 2 when sr == 16000 else x * 3: an int64 scalar input `sr` selects a branch of an If (Silero VAD)."""

    def branch(name: str, k: float) -> onnx.GraphProto:
        const = numpy_helper.from_array(np.array(k, np.float32), f"k_{name}")
        out = helper.make_tensor_value_info(f"y_{name}", TensorProto.FLOAT, [1, 4])
        return helper.make_graph([helper.make_node("Mul", ["x", f"k_{name}"], [f"y_{name}"])], name, [], [out], [const])

    nodes = [
        helper.make_node("Equal", ["sr", "rate"], ["is16k"], name="equal"),
        helper.make_node(
            "If", ["is16k"], ["y"], name="if", then_branch=branch("then", 2), else_branch=branch("else", 3)
        ),
    ]
    g = helper.make_graph(
        nodes,
        "vad",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]),
            helper.make_tensor_value_info("sr", TensorProto.INT64, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(np.array(16000, np.int64), "rate")],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def scalar_model() -> onnx.ModelProto:
    """y[1,4] = x[1,4] * s, with s a 0-d float input."""
    g = helper.make_graph(
        [helper.make_node("Mul", ["x", "s"], ["y"], name="mul")],
        "scaled",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]),
            helper.make_tensor_value_info("s", TensorProto.FLOAT, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _one_line_error(capsys, message: str) -> None:
    err = capsys.readouterr().err
    assert err.startswith("burnedge: error:") and message in err, err
    assert "Traceback" not in err and err.count("\n") == 1


X = np.arange(4, dtype=np.float32).reshape(1, 4)


# -- 1. --bind and export(bind=...) ---------------------------------------------------------------------------------
@pytest.mark.parametrize("sr, factor", [(16000, 2), (8000, 3)])
def test_export_bind_selects_the_branch(tmp_path, sr, factor):
    model = save(branch_model(), tmp_path / "vad.onnx")
    out = burnedge.export(model, tmp_path / "vad.bedge", bind={"sr": sr}, include_source=True)
    b = bundle.read(out)
    assert [t.name for t in b.inputs] == ["x"]
    assert all(c.ok for c in burnedge.verify(out))
    np.testing.assert_array_equal(burnedge.Session(out).run({"x": X})["y"], X * factor)
    # the source model carried for bench has the bound input as a constant, so onnxruntime can run it alone
    source = onnx.load_from_string(b.onnx)
    assert [i.name for i in source.graph.input] == ["x"]


def test_export_bind_of_a_proto_leaves_the_callers_proto_alone(tmp_path):
    proto = branch_model()
    burnedge.export(proto, tmp_path / "vad.bedge", bind={"sr": np.int64(8000)})
    assert [i.name for i in proto.graph.input] == ["x", "sr"]


def test_cli_export_with_bind_then_run(tmp_path, capsys):
    model = save(branch_model(), tmp_path / "vad.onnx")
    out = tmp_path / "vad.bedge"
    assert main(["export", str(model), "-o", str(out), "--bind", "sr=16000"]) == 0
    np.save(tmp_path / "x.npy", X)
    assert main(["run", str(out), "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", str(tmp_path / "o")]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "y.npy"), X * 2)


@pytest.mark.parametrize("command", ["inspect", "run"])
def test_cli_bind_on_a_model(command, tmp_path, capsys):
    model = save(branch_model(), tmp_path / "vad.onnx")
    np.save(tmp_path / "sr.npy", np.array(8000, np.int64))
    np.save(tmp_path / "x.npy", X)
    argv = [command, str(model), "--bind", f"sr={tmp_path / 'sr.npy'}"]
    if command == "run":
        argv += ["--input", f"x={tmp_path / 'x.npy'}", "--output-dir", str(tmp_path / "o")]
    else:
        argv += ["--json"]
    assert main(argv) == 0
    if command == "run":
        np.testing.assert_array_equal(np.load(tmp_path / "o" / "y.npy"), X * 3)
    else:
        assert [i["name"] for i in json.loads(capsys.readouterr().out)["inputs"]] == ["x"]


def test_cli_bind_a_comma_list_takes_the_inputs_dtype_and_shape(tmp_path, capsys):
    # binding the MLP's x [1,4] float32 to a comma list of ints: the output is a constant the bundle carries
    model = save(mlp(), tmp_path / "mlp.onnx")
    out = tmp_path / "mlp.bedge"
    assert main(["export", str(model), "-o", str(out), "--bind", "x=0,1,2,3"]) == 0
    got = burnedge.Session(out).run({})["y"]
    np.testing.assert_allclose(got, mlp_reference(X, mlp()), rtol=1e-6)


def test_quantize_takes_bind(tmp_path, capsys):
    model = save(branch_model(), tmp_path / "vad.onnx")
    np.save(tmp_path / "cal.npy", np.random.default_rng(0).standard_normal((8, 1, 4)).astype(np.float32))
    out = tmp_path / "q.bedge"
    argv = ["quantize", str(model), "-o", str(out), "--bind", "sr=16000", "--calibration", str(tmp_path / "cal.npy")]
    assert main(argv) == 0
    assert [t.name for t in bundle.read(out).inputs] == ["x"]


# -- 2. every user error is one line with status 2 ------------------------------------------------------------------
@pytest.mark.parametrize(
    "bind, message",
    [
        ("sr", "expected NAME=FILE.npy or NAME=VALUE"),
        ("=3", "expected NAME=FILE.npy or NAME=VALUE"),
        ("sr=abc", "neither a .npy file nor a number"),
        ("sr=1.5", "cannot hold exactly (e.g. 1.5)"),
        ("sr={tmp}/absent.npy", "cannot read"),
        ("nope=1", "no graph input named 'nope'"),
    ],
)
def test_malformed_bind_is_one_line(bind, message, tmp_path, capsys):
    model = save(branch_model(), tmp_path / "vad.onnx")
    assert main(["export", str(model), "-o", str(tmp_path / "v.bedge"), "--bind", bind.format(tmp=tmp_path)]) == 2
    _one_line_error(capsys, message)


def test_bind_on_a_bundle_is_a_user_error(tmp_path, capsys):
    out = burnedge.export(save(mlp(), tmp_path / "mlp.onnx"), tmp_path / "mlp.bedge")
    assert main(["inspect", str(out), "--bind", "x=1"]) == 2
    _one_line_error(capsys, "--bind does not apply to a bundle")


def test_timeline_into_a_missing_folder_makes_it(tmp_path, capsys):
    out = burnedge.export(save(mlp(), tmp_path / "mlp.onnx"), tmp_path / "mlp.bedge")
    svg = tmp_path / "new" / "deeper" / "arena.svg"
    assert main(["inspect", str(out), "--timeline", str(svg)]) == 0
    assert svg.read_text().startswith("<")


def test_timeline_where_no_folder_can_be_made_is_one_line(tmp_path, capsys):
    out = burnedge.export(save(mlp(), tmp_path / "mlp.onnx"), tmp_path / "mlp.bedge")
    (tmp_path / "file").write_text("")
    assert main(["inspect", str(out), "--timeline", str(tmp_path / "file" / "arena.svg")]) == 2
    _one_line_error(capsys, "--timeline")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["export", "{model}", "-o", "{tmp}/file/m.bedge"], "-o {tmp}/file/m.bedge: cannot make the folder"),
        (["run", "{model}", "--input", "x={tmp}/x.npy", "--output-dir", "{tmp}/file"], "--output-dir {tmp}/file:"),
        (["inspect", "{bundle}", "--timeline", "{tmp}"], "that is a folder; give the file to write"),
    ],
)
def test_unwritable_paths_are_one_line(argv, message, tmp_path, capsys):
    model = save(mlp(), tmp_path / "mlp.onnx")
    out = burnedge.export(model, tmp_path / "mlp.bedge")
    np.save(tmp_path / "x.npy", X)
    (tmp_path / "file").write_text("")
    argv = [a.format(model=model, bundle=out, tmp=tmp_path) for a in argv]
    assert main(argv) == 2
    _one_line_error(capsys, message.format(tmp=tmp_path))


def test_an_os_error_is_one_line(tmp_path, monkeypatch, capsys):
    from burnedge import cli_bundle

    def denied(a):
        raise PermissionError(13, "Permission denied", str(tmp_path / "m.bedge"))

    monkeypatch.setattr(cli_bundle, "cmd_verify", denied)
    assert main(["verify", str(tmp_path / "m.bedge")]) == 2
    _one_line_error(capsys, "m.bedge': Permission denied")


def test_report_into_a_missing_folder_makes_it(tmp_path, capsys):
    model = save(mlp(), tmp_path / "mlp.onnx")
    np.save(tmp_path / "cal.npy", np.random.default_rng(0).standard_normal((8, 1, 4)).astype(np.float32))
    report = tmp_path / "reports" / "r.html"
    argv = ["quantize", str(model), "-o", str(tmp_path / "q.bedge"), "--calibration", str(tmp_path / "cal.npy")]
    assert main([*argv, "--report", str(report)]) == 0
    assert "<html" in report.read_text().lower()


# -- 3. run: lossless dtype conversion, shapes from the .npy ---------------------------------------------------------
def test_run_converts_a_lossless_float64(tmp_path, capsys):
    model = save(mlp(), tmp_path / "mlp.onnx")
    np.save(tmp_path / "x.npy", X.astype(np.float64))
    assert main(["run", str(model), "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", str(tmp_path / "o")]) == 0
    np.testing.assert_allclose(np.load(tmp_path / "o" / "y.npy"), mlp_reference(X, mlp()), rtol=1e-6)


def test_run_refuses_a_lossy_float64(tmp_path, capsys):
    model = save(mlp(), tmp_path / "mlp.onnx")
    np.save(tmp_path / "x.npy", np.full((1, 4), 0.1))
    assert main(["run", str(model), "--input", f"x={tmp_path / 'x.npy'}"]) == 2
    _one_line_error(capsys, "input 'x': expected float32, got float64 values it cannot hold exactly")


def test_run_takes_dynamic_shapes_from_the_npy(tmp_path, capsys):
    model = save(mlp(batch="N"), tmp_path / "mlp.onnx")
    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    np.save(tmp_path / "x.npy", x)
    assert main(["run", str(model), "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", str(tmp_path / "o")]) == 0
    np.testing.assert_allclose(np.load(tmp_path / "o" / "y.npy"), mlp_reference(x, mlp()), rtol=1e-6)


def test_lossless_rules():
    from burnedge.errors import InputError
    from burnedge.feeds import lossless

    assert lossless(np.array([1.5, -2.0]), np.float32, "x").dtype == np.float32
    assert lossless(np.array(16000), np.int32, "x").dtype == np.int32
    assert lossless(np.array([3.0]), np.int64, "x").tolist() == [3]
    assert np.isnan(lossless(np.array([np.nan]), np.float32, "x")).all()
    for arr, dtype in [(np.array([0.1]), np.float32), (np.array([300]), np.int8), (np.array([np.inf]), np.int32)]:
        with pytest.raises(InputError):
            lossless(arr, dtype, "x")


# -- 4. scalar inputs round-trip through test vectors ---------------------------------------------------------------
def test_scalar_inputs_round_trip_through_vectors(tmp_path, capsys):
    out = burnedge.export(save(scalar_model(), tmp_path / "s.onnx"), tmp_path / "s.bedge")
    feeds, _ = bundle.read(out).vectors()[0]
    assert feeds["s"].shape == ()
    assert main(["verify", str(out)]) == 0
    assert main(["bench", str(out), "--runs", "2", "--warmup", "0", "--vs", "none"]) == 0


# -- 5. verify's summary names the worst row ------------------------------------------------------------------------
def test_verify_summary_names_the_worst_relative_row(tmp_path, capsys):
    from burnedge.bundle import writer

    b = bundle.read(burnedge.export(save(mlp(), tmp_path / "mlp.onnx"), tmp_path / "mlp.bedge"))
    members = dict(b.members)
    for i, error in ((0, 0.01), (1, 0.5)):  # off by a little in vector 0, by more in vector 1
        arrays = bundle.decode_npz(members[f"vectors/{i}.npz"])
        arrays["out_0"] = arrays["out_0"] + np.float32(error)
        members[f"vectors/{i}.npz"] = bundle.encode_npz(arrays)
    manifest = {k: v for k, v in b.manifest.items() if k != "files"}
    bad = writer.write(tmp_path / "bad.bedge", manifest, members)
    assert main(["verify", str(bad), "--tolerance", "10"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {int(line.split()[1]): line for line in lines if line.startswith("vector ")}
    summary = next(line for line in lines if line.startswith("max error"))
    assert "vector 1" in summary and "'y'" in summary
    worst_abs = rows[1].split("max abs error ")[1].split()[0]
    assert summary.rstrip().endswith(f"max abs error is {worst_abs}")


# -- 6. emulate: the missing library first --------------------------------------------------------------------------
def test_emulate_says_the_library_is_missing_before_qemu(tmp_path, monkeypatch):
    from burnedge.emulate import EmulationError, emulate

    out = burnedge.export(save(mlp(), tmp_path / "mlp.onnx"), tmp_path / "mlp.bedge")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no QEMU either
    with pytest.raises(EmulationError) as info:
        emulate(out, "rpi4")
    message = str(info.value)
    assert message.startswith(f"{out}: the bundle carries no library for target 'rpi4'")
    assert message.index("no library") < message.index("QEMU")


# -- 7. the ops table -----------------------------------------------------------------------------------------------
def test_ops_table_is_readable_and_json_complete(capsys):
    assert main(["ops"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 180
    at = next(i for i, line in enumerate(lines) if line.split()[:1] == ["If"])
    assert lines[at].split()[2:4] == ["yes", "yes"]  # c, numpy
    untested = next(line for line in lines[at + 1 :] if line.startswith("  no node test:"))
    assert "(" not in untested.replace("seq/optional", "") and "more" in untested
    assert main(["ops", "--json"]) == 0
    rows = {r["op"]: r for r in json.loads(capsys.readouterr().out)}
    types = rows["If"]["dtypes"]
    assert "float" in types and "seq(float)" in types and "optional(seq(float))" in types
    assert all(t.count("(") == t.count(")") for r in rows.values() for t in r["dtypes"])


# -- 8. calibration takes a natural batch ---------------------------------------------------------------------------
def test_calibration_takes_a_natural_batch(tmp_path):
    from burnedge.quantize.data import load_calibration

    graph = burnedge.load(save(mlp(), tmp_path / "mlp.onnx")).graph  # x [1, 4]
    data = np.random.default_rng(0).standard_normal((64, 4)).astype(np.float32)
    np.save(tmp_path / "natural.npy", data)
    feeds = load_calibration(tmp_path / "natural.npy", graph)
    assert len(feeds) == 64 and feeds[5]["x"].shape == (1, 4)
    np.testing.assert_array_equal(feeds[5]["x"][0], data[5])
    np.save(tmp_path / "one.npy", data[:1])  # (1, 4): the input's own shape, one sample
    assert len(load_calibration(tmp_path / "one.npy", graph)) == 1
    np.save(tmp_path / "stacked.npy", data.reshape(64, 1, 4))  # the documented [N, 1, 4]
    assert len(load_calibration(tmp_path / "stacked.npy", graph)) == 64


def test_calibration_natural_batch_from_the_cli(tmp_path, capsys):
    model = save(mlp(), tmp_path / "mlp.onnx")
    np.save(tmp_path / "cal.npy", np.random.default_rng(0).standard_normal((64, 4)).astype(np.float32))
    argv = ["quantize", str(model), "-o", str(tmp_path / "q.bedge"), "--calibration", str(tmp_path / "cal.npy")]
    assert main(argv) == 0
    assert bundle.read(tmp_path / "q.bedge").manifest["quantization"]["calibration_batches"] == 64


def test_scalars_of_an_older_bundle_stored_as_shape_1_still_verify_and_bench(tmp_path, capsys):
    from burnedge.bundle import writer

    b = bundle.read(burnedge.export(save(scalar_model(), tmp_path / "s.onnx"), tmp_path / "s.bedge"))
    members = dict(b.members)
    for name in b.manifest["vectors"]:  # as encode_npz wrote them before: np.ascontiguousarray made () into (1,)
        arrays = {k: v.reshape(1) if v.ndim == 0 else v for k, v in bundle.decode_npz(members[name]).items()}
        members[name] = bundle.encode_npz(arrays)
    old = writer.write(tmp_path / "old.bedge", {k: v for k, v in b.manifest.items() if k != "files"}, members)
    assert bundle.read(old).vectors()[0][0]["s"].shape == (1,)
    assert main(["verify", str(old)]) == 0
    assert main(["bench", str(old), "--runs", "2", "--warmup", "0", "--vs", "none"]) == 0
