"""checked<c> on int8 graphs whose tensors the C backend keeps channels-last, and verify's contract for int8 outputs
(one quantization step: a float island before the int8 chain rounds in its own order; issue 10, ddddocr)."""

from __future__ import annotations

import numpy as np
import pytest

import burnedge
from burnedge import backends, bundle
from burnedge.backends.c.lower.layout import nhwc_int8_tensors
from tests.backends.int8_graphs import nhwc_chain, same
from tests.unit.helpers import mlp


def test_checked_c_reads_channels_last_int8_tensors_in_the_graphs_layout():
    g = nhwc_chain()
    model = g.model()
    assert nhwc_int8_tensors(model.graph)  # the chain does keep tensors channels-last between its convs
    sess = burnedge.Session(model, backend="checked<c>")
    same(g, sess.run(g.feeds()))  # no step reported as differing, and the outputs are the reference's
    assert sess.executable.steps_checked == len(sess.plan.steps)


@pytest.fixture(scope="module")
def int8_bundle(tmp_path_factory):
    rng = np.random.default_rng(0)
    calib = [{"x": rng.standard_normal((1, 4)).astype(np.float32)} for _ in range(8)]
    path = tmp_path_factory.mktemp("v") / "mlp.bedge"
    return burnedge.export(mlp(), path, quantize="int8", calibration=calib, keep_float=(), test_vectors=1)


def _shifted(monkeypatch, b, steps: float):
    """The bundle's library, with every output moved by `steps` times its int8 step."""
    step = {r["name"]: r["step"] for r in b.manifest["outputs"]}
    real = backends.lookup(b.backend).load

    class Shifted:
        def __init__(self, inner):
            self.inner = inner

        def run(self, feeds):
            return {k: (v + steps * step[k]).astype(v.dtype) for k, v in self.inner.run(feeds).items()}

    monkeypatch.setattr(type(backends.lookup(b.backend)), "load", lambda self, bb, t=1: Shifted(real(bb, t)))


def test_an_int8_output_may_be_one_step_off_not_two(int8_bundle, monkeypatch):
    b = bundle.read(int8_bundle)
    assert all(isinstance(r.get("step"), float) and r["step"] > 0 for r in b.manifest["outputs"])
    assert all(c.ok for c in burnedge.verify(b))  # exact
    _shifted(monkeypatch, b, 1.0)
    checks = burnedge.verify(b)
    assert all(c.ok for c in checks) and max(c.relative for c in checks) > 1e-4  # beyond the float contract
    _shifted(monkeypatch, b, 2.0)
    assert not any(c.ok for c in burnedge.verify(b))


def test_a_float_output_has_no_step(tmp_path):
    b = bundle.read(burnedge.export(mlp(), tmp_path / "f.bedge", test_vectors=1))
    assert all("step" not in r for r in b.manifest["outputs"])
