"""The bundle commands of the CLI: export, run, verify, inspect (text, JSON, SVG timeline), bench, demo; and each
one's answer to malformed input (exit 2, one line on stderr)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
import zipfile

import numpy as np
import onnx
import pytest

from burnedge import bundle
from burnedge.bundle import writer as bundle_writer
from burnedge.cli import main

from .test_bundle import X, chain_model


@pytest.fixture(scope="module")
def onnx_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "chain.onnx"
    onnx.save(chain_model(), str(path))
    return path


@pytest.fixture(scope="module")
def bedge(onnx_path):
    out = onnx_path.parent / "chain.bedge"
    assert main(["export", str(onnx_path), "-o", str(out), "--input-shape", "x=4,6", "--with-source"]) == 0
    return out


def test_export_prints_the_plan(onnx_path, tmp_path, capsys):
    out = tmp_path / "u.bedge"
    assert main(["export", str(onnx_path), "-o", str(out), "--input-shape", "x=4,6", "--unpacked"]) == 0
    text = capsys.readouterr().out
    assert f"-> {out} (folder" in text and "lower bound" in text and "weights" in text and "steps" in text
    assert (out / "manifest.json").is_file()


def test_run_a_bundle(bedge, tmp_path, capsys):
    np.save(tmp_path / "x.npy", X)
    argv = ["run", str(bedge), "--input", f"x={tmp_path / 'x.npy'}", "--threads", "2", "--output-dir", str(tmp_path)]
    assert main(argv) == 0
    np.testing.assert_allclose(np.load(tmp_path / "z.npy"), -1 / (1 + np.exp(-X)), rtol=1e-5)
    assert "wrote 3 output(s)" in capsys.readouterr().out


def test_verify(bedge, capsys):
    assert main(["verify", str(bedge)]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("PASS") and "max error" in out


def test_verify_fails_on_a_tight_tolerance(bedge, tmp_path, capsys):
    # Exp and Sigmoid in C differ from numpy in the last bits: a zero tolerance must report them
    assert main(["verify", str(bedge), "--tolerance", "0"]) in (0, 1)
    out = capsys.readouterr().out
    assert out.rstrip().endswith(("PASS", "FAIL"))
    b = bundle.read(bedge)
    members = dict(b.members)

    arrays = bundle.decode_npz(members["vectors/1.npz"])
    arrays["out_1"] = -arrays["out_1"]
    members["vectors/1.npz"] = bundle.encode_npz(arrays)
    bad = bundle_writer.write(tmp_path / "bad.bedge", {k: v for k, v in b.manifest.items() if k != "files"}, members)
    assert main(["verify", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and out.rstrip().endswith("FAIL")


def test_inspect_json(bedge, capsys):
    assert main(["inspect", str(bedge), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["arena_bytes"] >= info["arena_lower_bound_bytes"] > 0
    assert all(isinstance(s["ops"], list) and s["ops"] for s in info["steps"])
    assert {"Sigmoid", "Mul", "Add", "Exp", "Neg"} <= {op for s in info["steps"] for op in s["ops"]}
    assert info["inputs"][0]["name"] == "x" and info["buffers"] and "lib/host/model.so" in info["members"]


def test_inspect_text_and_svg_timeline(bedge, tmp_path, capsys):
    svg = tmp_path / "timeline.svg"
    assert main(["inspect", str(bedge), "--timeline", str(svg)]) == 0
    out = capsys.readouterr().out
    assert "arena timeline" in out and "lower bound" in out and "Sigmoid" in out and "#" in out
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    rects = root.findall(".//{http://www.w3.org/2000/svg}g/{http://www.w3.org/2000/svg}rect")
    assert len(rects) == len(bundle.read(bedge).plan["buffers"])


def test_bench(bedge, capsys):
    assert main(["bench", str(bedge), "--runs", "5", "--warmup", "1", "--vs", "none"]) == 0
    out = capsys.readouterr().out
    assert "median" in out and "max RSS" in out and "ratio" not in out
    pytest.importorskip("onnxruntime")
    assert main(["bench", str(bedge), "--runs", "5", "--vs", "onnxruntime", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "onnxrt" in out and "x onnxruntime's time" in out


def test_a_bundle_without_source_or_vectors(onnx_path, tmp_path, capsys):
    out = tmp_path / "bare.bedge"
    argv = ["export", str(onnx_path), "-o", str(out), "--input-shape", "x=4,6", "--no-source", "--test-vectors", "0"]
    assert main(argv) == 0
    assert "model.onnx" not in bundle.read(out).members
    assert main(["bench", str(out), "--runs", "3"]) == 0  # nothing to compare with: latency and memory only
    assert "ratio" not in capsys.readouterr().out
    assert main(["bench", str(out), "--runs", "3", "--vs", "onnxruntime"]) == 2
    assert "carries no source model" in capsys.readouterr().err
    assert main(["verify", str(out)]) == 2
    assert "carries no test vectors" in capsys.readouterr().err


def test_demo_runs_the_digits_model(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "accuracy" in out and "latency" in out and "arena" in out
    accuracy = float(out.split("accuracy")[1].split("%")[0])
    assert accuracy > 90


@pytest.mark.parametrize(
    "argv, message",
    [
        (["export", "{tmp}/absent.onnx", "-o", "{tmp}/m.bedge"], "no such file"),
        (["export", "{model}", "-o", "{tmp}/m.bedge", "--input-shape", "x=4,a"], "expected NAME=D0,D1"),
        (["export", "{model}", "-o", "{tmp}/m.bedge", "--target", "mars"], "unknown target 'mars'"),
        (["export", "{model}", "-o", "{tmp}/notes.txt", "--input-shape", "x=4,6"], "is not an edge bundle"),
        (["export", "{model}", "--test-vectors", "-1"], "--test-vectors '-1': expected a whole number >= 0"),
        (["verify", "{tmp}/renamed.bedge"], "not a readable edge bundle (not a zip archive)"),
        (["verify", "{tmp}/foreign.zip"], "no manifest.json"),
        (["verify", "{tmp}/cut.bedge"], "truncated or damaged"),
        (["verify", "{bundle}", "--threads", "0"], "--threads '0': expected a whole number >= 1"),
        (["inspect", "{tmp}/cut.bedge", "--json"], "truncated or damaged"),
        (["inspect", "{model}", "--timeline", "{tmp}/t.svg"], "--timeline needs a bundle"),
        (["inspect", "{bundle}", "--input-shape", "x=1,6"], "does not apply to a bundle"),
        (["run", "{bundle}", "--input-shape", "x=1,6"], "does not apply to a bundle"),
        (["run", "{bundle}", "--input", "x={tmp}/wrong.npy"], "input 'x': expected shape [4, 6], got [3]"),
        (["run", "{bundle}", "--backend", "tpu"], "unknown backend 'tpu'"),
        (["bench", "{bundle}", "--runs", "0"], "--runs '0': expected a whole number >= 1"),
        (["bench", "{tmp}/absent.bedge"], "no such file"),
    ],
)
def test_user_errors_exit_2(argv, message, onnx_path, bedge, tmp_path, capsys):
    np.save(tmp_path / "wrong.npy", np.zeros(3, np.float32))
    (tmp_path / "notes.txt").write_text("keep me")
    (tmp_path / "renamed.bedge").write_bytes(onnx_path.read_bytes())
    (tmp_path / "cut.bedge").write_bytes(bedge.read_bytes()[:-100])
    with zipfile.ZipFile(tmp_path / "foreign.zip", "w") as z:
        z.writestr("a.txt", "hello")
    argv = [a.format(model=onnx_path, bundle=bedge, tmp=tmp_path) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("burnedge: error:") and message in err, err
    assert "Traceback" not in err and err.count("\n") == 1
    assert (tmp_path / "notes.txt").read_text() == "keep me"
