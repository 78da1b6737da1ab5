"""The ONNX backend node tests (onnx 1.22.0) on every available backend, gated by an expectations file.

Each test must do what its expectations line says: a `pass` that fails, or a `fail` that passes, is drift and
fails the run (update the file with `python -m tests.conformance.update`). Expected failures show as xfail with
their recorded reason.
"""

from __future__ import annotations

import pytest

from burnedge.backends import available

from . import expectations
from .harness import run_node_test
from .node_data import node_test_root

ROOT = node_test_root()
TESTS = sorted(p.name for p in ROOT.iterdir() if p.is_dir())
BACKENDS = [b for b in available() if expectations.path_for(b).exists()]


@pytest.mark.parametrize("backend", BACKENDS)
def test_expectations_cover_every_test(backend):
    expected = expectations.read(backend)
    assert sorted(expected) == TESTS
    for name, (status, reason) in expected.items():
        assert status in expectations.STATUSES, name
        assert status == "pass" or reason, f"{name}: a failing test needs a reason"


def test_numpy_reference_pass_count():
    """The numpy reference is the spec: it passes at least as many node tests as onnxruntime (1,490) here."""
    passed = sum(1 for s, _ in expectations.read("numpy").values() if s == "pass")
    assert passed >= 1490, passed


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", TESTS)
def test_node(name, backend):
    status, reason = expectations.read_cached(backend).get(name, ("pass", ""))
    outcome = run_node_test(ROOT / name, backend)
    if status == "pass":
        assert outcome.ok, f"expected to pass, now fails: {outcome.reason}"
    else:
        assert outcome.status == status, f"expected {status} ({reason}), now {outcome.status}: update the expectations"
        pytest.xfail(reason)
