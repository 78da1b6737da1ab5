"""verify holds each output to what float32 can do: the exporter measures how far an output moves between the
reference with float64 and with float32 sums (and, before int8, with nudged float values); an ill-conditioned
output is allowed that spread, a well-conditioned one gains nothing (issue 10: a pitch tracker's correct bundle
failed verify; magika's int8 bundle failed its own test vector)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge import backends, bundle
from burnedge.cli import main
from burnedge.verifier import ROUNDING_MARGIN

from .helpers import mlp, save


def cancelling_sums() -> onnx.ModelProto:
    """y = (x + 1000) @ w, each column of w 2048 times +1 and 2048 times -1: the terms are ~1000 and cancel to ~20,
    so each float32 summation order lands its own 1e-4 or more (relative) away from the exact sum.
    `same` = Relu(x + 1000) is exact everywhere."""
    rng, signs = np.random.default_rng(0), np.repeat(np.float32([1, -1]), 2048)  # as many +1000 as -1000
    w = np.stack([rng.permutation(signs) for _ in range(8)], axis=1)
    consts = [numpy_helper.from_array(np.array(1000.0, np.float32), "offset"), numpy_helper.from_array(w, "w")]
    nodes = [
        helper.make_node("Add", ["x", "offset"], ["xo"]),
        helper.make_node("MatMul", ["xo", "w"], ["y"]),
        helper.make_node("Relu", ["xo"], ["same"]),
    ]
    g = helper.make_graph(
        nodes,
        "sums",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4096])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8]),
            helper.make_tensor_value_info("same", TensorProto.FLOAT, [1, 4096]),
        ],
        consts,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _rows(path) -> dict[str, dict]:
    return {r["name"]: r for r in bundle.read(path).manifest["outputs"]}


def test_an_ill_conditioned_output_is_held_to_what_float32_does(tmp_path, capsys):
    path = burnedge.export(save(cancelling_sums(), tmp_path / "s.onnx"), tmp_path / "v.bedge", test_vectors=2)
    rows = _rows(path)
    assert rows["y"]["rounding"] > 1e-4 * 20  # float32 sums drift past the tolerance (|y| is ~20)
    assert rows["same"].get("rounding", 0.0) == 0.0  # Relu of a sum of two float32 values: exact
    checks = burnedge.verify(path)
    assert all(c.ok for c in checks)
    ys = [c for c in checks if c.output == "y"]
    assert any(c.relative > 1e-4 for c in ys) and all(c.allowed > 0 for c in ys if c.relative > 1e-4)
    assert main(["verify", str(path)]) == 0
    assert "rounding allows" in capsys.readouterr().out


def _shifted(monkeypatch, b, by: float) -> None:
    """The bundle's library, with every float output moved by `by` times its largest value."""
    real = backends.lookup(b.backend).load

    class Shifted:
        def __init__(self, inner):
            self.inner = inner

        def run(self, feeds):
            out = self.inner.run(feeds)
            return {k: (v + by * np.max(np.abs(v))).astype(v.dtype) for k, v in out.items()}

    monkeypatch.setattr(type(backends.lookup(b.backend)), "load", lambda self, bb, t=1: Shifted(real(bb, t)))


def test_a_well_conditioned_output_gains_nothing(tmp_path, monkeypatch):
    path = burnedge.export(mlp(), tmp_path / "m.bedge", test_vectors=2)
    b = bundle.read(path)
    for row in b.manifest["outputs"]:  # the two opinions agree to float32 rounding: far below the tolerance
        assert ROUNDING_MARGIN * row.get("rounding", 0.0) < 1e-6 * 10
    _shifted(monkeypatch, b, 2e-4)  # a broken kernel 2e-4 off is still caught
    assert not any(c.ok for c in burnedge.verify(b))
