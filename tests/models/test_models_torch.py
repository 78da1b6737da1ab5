"""The model suite on the torch backend against the numpy reference (1e-4 of the output's range).

BURNEDGE_TORCH_DEVICE=cuda runs it on a GPU (CI runs the CPU)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from burnedge.backends.torch import TorchBackend
from burnedge.compiler import compile  # noqa: A004
from tests.models import suite

pytest.importorskip("torch", reason="the torch backend needs the train extra")

RTOL = 1e-4  # max|torch - numpy| / max|numpy|, per output


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = os.environ.get("BURNEDGE_MODEL_CACHE")
    return Path(env) if env else tmp_path_factory.mktemp("models")


@pytest.mark.parametrize("name", sorted(suite.MODELS))
def test_torch_matches_numpy(name: str, model_cache: Path) -> None:
    import burnedge

    model = burnedge.load(suite.build_model(name, model_cache))
    feeds = suite.example_feeds(suite.build_model(name, model_cache), seed=0)
    want = burnedge.Session(model, backend="numpy").run({k: v.copy() for k, v in feeds.items()})
    backend = TorchBackend(device=os.environ.get("BURNEDGE_TORCH_DEVICE", "cpu"))
    got = compile(model, backend).executable.run({k: v.copy() for k, v in feeds.items()})
    assert sorted(got) == sorted(want)
    for out, w in want.items():
        g = got[out]
        assert g.shape == w.shape and g.dtype == w.dtype, f"{out}: {g.dtype}{g.shape} != {w.dtype}{w.shape}"
        err = np.max(np.abs(g.astype(np.float64) - w)) / np.max(np.abs(w))
        print(f"{name} {out}: relative error {err:.3g}")
        assert err <= RTOL, f"{out}: relative error {err:.3g} > {RTOL:g}"
