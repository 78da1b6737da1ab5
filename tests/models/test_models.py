"""Runs every model of the suite with burnedge's numpy backend and with onnxruntime."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import onnxruntime as ort
import pytest

RTOL = 1e-4  # max|burnedge - ort| / max|ort|, per output


def _load_suite() -> ModuleType:
    # Loaded by path so this works whatever pytest's import mode or rootdir.
    name = "burnedge_model_suite"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("suite.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


suite = _load_suite()


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
