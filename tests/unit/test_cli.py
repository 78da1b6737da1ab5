"""The CLI, driven through main(argv): commands work, and user errors exit 2 with one line and no traceback."""

from __future__ import annotations

import json

import numpy as np
import pytest

from burnedge.cli import main

from .helpers import mlp, mlp_reference, save


@pytest.fixture
def model_path(tmp_path):
    return save(mlp(), tmp_path / "mlp.onnx")


def test_inspect_json(model_path, capsys):
    assert main(["inspect", str(model_path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["inputs"] == [{"name": "x", "shape": [1, 4], "dtype": "float32"}]
    assert info["ops"] == {"MatMul": 1, "Add": 1, "Relu": 1}
    assert info["parameters"] == 4 * 3 + 3
    assert info["macs"] == {"MatMul": 12}
    assert info["unsupported_ops"] == {}


def test_inspect_text(model_path, capsys):
    assert main(["inspect", str(model_path)]) == 0
    out = capsys.readouterr().out
    assert "MatMul" in out and "parameters 15" in out


def test_run_writes_outputs(model_path, tmp_path, capsys):
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    np.save(tmp_path / "x.npy", x)
    out_dir = tmp_path / "out"
    assert main(["run", str(model_path), "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", str(out_dir)]) == 0
    np.testing.assert_allclose(np.load(out_dir / "y.npy"), mlp_reference(x, mlp()), rtol=1e-6)
    assert "wrote 1 output(s)" in capsys.readouterr().out


def test_ops_matrix(capsys):
    assert main(["ops", "--json"]) == 0
    rows = {r["op"]: r for r in json.loads(capsys.readouterr().out)}
    assert "numpy" in rows["Add"]["backends"]
    assert 7 in rows["Add"]["versions"] and "float" in rows["Add"]["dtypes"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["inspect", "nowhere.onnx"], "no such file"),
        (["run", "{model}", "--input", "x"], "expected NAME=FILE.npy"),
        (["run", "{model}", "--input", "x={tmp}/absent.npy"], "cannot read"),
        (["run", "{model}", "--input-shape", "x=1,a"], "expected NAME=D0,D1"),
        (["run", "{model}", "--input", "x={tmp}/wrong.npy"], "input 'x': expected shape [1, 4], got [3]"),
        (["run", "{model}", "--backend", "tpu"], "unknown backend 'tpu'"),
    ],
)
def test_user_errors_exit_2(argv, message, model_path, tmp_path, capsys):
    np.save(tmp_path / "wrong.npy", np.zeros(3, np.float32))
    argv = [a.format(model=model_path, tmp=tmp_path) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("burnedge: error:") and message in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_inspect_lists_unsupported_ops(tmp_path, capsys):
    m = mlp()
    m.graph.node[2].op_type = "NoSuchOp"
    p = save(m, tmp_path / "m.onnx")
    assert main(["inspect", str(p), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["unsupported_ops"] == {"NoSuchOp": ["relu"]}
