"""Runs every model of the suite with burnedge's numpy backend and with onnxruntime."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from tests.models import suite

RTOL = 1e-4  # max|burnedge - ort| / max|ort|, per output


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where built models live: $BURNEDGE_MODEL_CACHE if set, else a session temp dir."""
    env = os.environ.get("BURNEDGE_MODEL_CACHE")
    return Path(env) if env else tmp_path_factory.mktemp("models")


@pytest.mark.parametrize("name", sorted(suite.MODELS))
def test_matches_onnxruntime(name: str, model_cache: Path) -> None:
    import burnedge  # here, so a missing package fails each test, not collection

    path = suite.build_model(name, model_cache)
    feeds = suite.example_feeds(path, seed=0)

    reference = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    output_names = [o.name for o in reference.get_outputs()]
    expected = dict(zip(output_names, reference.run(output_names, feeds)))

    session = burnedge.Session(burnedge.load(path), backend="numpy")
    actual = session.run({k: v.copy() for k, v in feeds.items()})

    assert sorted(actual) == sorted(expected)
    for out_name, want in expected.items():
        got = np.asarray(actual[out_name])
        assert np.isfinite(want).all(), f"{out_name}: onnxruntime output is not finite"
        assert got.shape == want.shape, f"{out_name}: shape {got.shape} != {want.shape}"
        assert got.dtype == want.dtype, f"{out_name}: dtype {got.dtype} != {want.dtype}"
        err = np.max(np.abs(got.astype(np.float64) - want)) / np.max(np.abs(want))
        assert err <= RTOL, f"{out_name}: relative error {err:.3g} > {RTOL:g}"
