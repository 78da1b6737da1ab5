"""Decorator backends and the backends' own word on what they run: checked<c> stops at the first step that
differs from the numpy reference, profiled<c> times every step, `burnedge ops` and `inspect` ask `supports()`."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import burnedge
from burnedge.backends import available, get, lookup
from burnedge.backends.c import lower
from burnedge.backends.wrappers import CheckError
from burnedge.cli import main
from burnedge.errors import BurnedgeError
from burnedge.examples import DIGITS_MODEL

IMAGE = np.random.default_rng(0).random((1, 64), dtype=np.float32)


def _broken_softmax(monkeypatch) -> None:
    """The Softmax lowering, with one extra statement that adds 0.5 to the first output element."""
    real = lower.find(burnedge.load(DIGITS_MODEL).graph.nodes[-1])

    def broken(ctx, node):
        return real.fn(ctx, node) + f"\n{ctx.tensor(node.outputs[0])}[0] += 0.5f;"

    monkeypatch.setitem(lower._LOWERINGS, ("", "Softmax"), lower.Lowering(broken, real.scratch))


def test_checked_c_passes_a_correct_model():
    sess = burnedge.Session(DIGITS_MODEL, backend="checked<c>")
    want = burnedge.Session(DIGITS_MODEL).run({"image": IMAGE})["probabilities"]
    np.testing.assert_allclose(sess.run({"image": IMAGE})["probabilities"], want, rtol=1e-5, atol=1e-7)
    assert sess.executable.steps_checked == len(sess.plan.steps) > 1


def test_checked_c_names_the_first_differing_step(monkeypatch):
    _broken_softmax(monkeypatch)
    sess = burnedge.Session(DIGITS_MODEL, backend="checked<c>")
    with pytest.raises(
        CheckError, match=r"step 3 \(Softmax 'softmax'; ONNX nodes: Softmax 'softmax'\).*probabilities"
    ) as e:
        sess.run({"image": IMAGE})
    assert e.value.step == len(sess.plan.steps) - 1 and e.value.max_abs == pytest.approx(0.5, abs=1e-6)
    # the plain C backend runs the broken kernel without a word: that is what checked<c> is for
    out = burnedge.Session(DIGITS_MODEL, backend="c").run({"image": IMAGE})["probabilities"]
    assert out.sum() == pytest.approx(1.5, abs=1e-5)


def test_checked_on_the_cli(monkeypatch, tmp_path, capsys):
    _broken_softmax(monkeypatch)
    np.save(tmp_path / "x.npy", IMAGE)
    assert main(["run", str(DIGITS_MODEL), "--input", f"image={tmp_path / 'x.npy'}", "--backend", "checked<c>"]) == 2
    err = capsys.readouterr().err
    assert "step 3 (Softmax 'softmax'" in err and err.count("\n") == 1


def test_profiled_c_times_every_step_and_bench_prints_the_shares(tmp_path, capsys):
    sess = burnedge.Session(DIGITS_MODEL, backend="profiled<c>")
    for _ in range(5):
        sess.run({"image": IMAGE})
    rows = sess.executable.profile()
    assert [r.step for r in rows] == list(range(len(sess.plan.steps)))
    assert all(r.seconds >= 0 for r in rows) and sum(r.share for r in rows) == pytest.approx(1.0)
    path = burnedge.export(DIGITS_MODEL, tmp_path / "d.bedge", test_vectors=1)
    capsys.readouterr()
    assert main(["bench", str(path), "--profile", "--runs", "20", "--vs", "none"]) == 0
    out = capsys.readouterr().out
    steps = [line for line in out.splitlines() if line.strip().endswith(("'fc1'", "'fc2'", "'softmax'", "'normalize'"))]
    assert len(steps) == 4 and all("us" in line and "%" in line for line in steps)
    shares = [float(line.split("us")[1].split("%")[0]) for line in steps]
    assert sum(shares) == pytest.approx(100, abs=0.5)


def test_decorators_compose_and_unknown_names_are_errors():
    assert lookup("profiled<checked<c>>").name == "profiled<checked<c>>"
    with pytest.raises(BurnedgeError, match="unknown backend decorator 'timed'; decorators: checked, profiled"):
        get("timed<c>")
    with pytest.raises(BurnedgeError, match="unknown backend 'cuda'"):
        get("checked<cuda>")
    with pytest.raises(BurnedgeError, match="needs the model, not a bundle"):
        lookup("checked<c>").load(None)


def test_ops_shows_what_each_backend_runs(capsys):
    assert main(["ops", "--json"]) == 0
    rows = {r["op"]: r for r in json.loads(capsys.readouterr().out)}
    assert "c" in rows["Relu"]["backends"] and "numpy" in rows["Relu"]["backends"]
    for op in ("Loop", "GlobalLpPool"):  # the reference has them; the C backend has no kernel for them
        assert "numpy" in rows[op]["backends"] and rows[op]["why_not"]["c"] == f"no C kernel for {op}"
    for op in ("MeanVarianceNormalization", "ai.onnx.preview.FlexAttention"):  # C runs their ONNX function body
        assert "c" in rows[op]["backends"] and rows[op]["via"]["c"] == "via its ONNX function"
        assert set(rows[op]["via"]) <= {"c", "opencl"}  # the backends that expand ONNX functions
    assert rows["Relu"]["via"] == {}
    if "torch" in available():  # the torch column: Acos is a torch function, Loop is not
        assert "torch" in rows["Acos"]["backends"] and "torch" in rows["Relu"]["backends"]
        assert rows["Loop"]["why_not"]["torch"] == "no torch function for Loop"


def test_inspect_and_export_ask_the_backend(tmp_path, capsys):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1, 1])
    node = helper.make_node("GlobalLpPool", ["x"], ["y"], name="lp")
    g = helper.make_graph([node], "g", [x], [y])
    path = tmp_path / "lp.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)]), path)
    assert main(["inspect", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["backends"]["c"] == {"GlobalLpPool": ["lp"]} and info["backends"]["numpy"] == {}
    with pytest.raises(burnedge.UnsupportedOpError, match="on the c backend: GlobalLpPool .*'lp'"):
        burnedge.export(path, tmp_path / "a.bedge")


def test_a_library_without_the_per_step_entry_is_a_clear_error(tmp_path):
    """A library from before be_model_step (an old bundle's) runs, but cannot be profiled or stepped."""
    import subprocess

    from burnedge.backends.c.runtime import CModel, aligned_copy

    src = tmp_path / "old.c"
    src.write_text(
        "#include <stddef.h>\n#include <stdint.h>\nsize_t be_model_arena_bytes(void) { return 64; }\n"
        "size_t be_model_weight_bytes(void) { return 0; }\n"
        "int be_model_run(uint8_t *a, const uint8_t *w, int t) { (void)a; (void)w; (void)t; return 0; }\n"
    )
    lib = tmp_path / "old.so"
    subprocess.run(["cc", "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
    model = CModel(lib, aligned_copy(np.zeros(0, np.uint8)), [], [], {}, 1)
    assert model.run({}) == {}
    for call in (lambda: model.profile({}), lambda: model.run_steps({})):
        with pytest.raises(BurnedgeError, match="no per-step entry .* built by an older burnedge; export the model"):
            call()
