"""The model suite on the OpenCL backend (PoCL in CI) against the numpy reference (1e-4 of the output's range),
and run_async on a whole model giving the same bits as run."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import burnedge
from burnedge.backends import lookup
from tests.models import suite

pytest.importorskip("pyopencl", reason="the OpenCL backend needs the opencl extra")
if lookup("opencl").unavailable_reason():
    pytest.skip(f"no OpenCL device: {lookup('opencl').unavailable_reason()}", allow_module_level=True)

RTOL = 1e-4  # max|opencl - numpy| / max|numpy|, per output
# a minute or more each of PoCL build (cold cache) and run on 2 cores: 224 x 224 inputs, or many kernels
SLOW = {"resnet18", "mobilenet_v2", "transformer", "resnet8"}


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = os.environ.get("BURNEDGE_MODEL_CACHE")
    return Path(env) if env else tmp_path_factory.mktemp("models")


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in sorted(suite.MODELS)]
)
def test_opencl_matches_numpy(name: str, model_cache: Path) -> None:
    path = suite.build_model(name, model_cache)
    model = burnedge.load(path)
    feeds = suite.example_feeds(path, seed=0)
    want = burnedge.Session(model, backend="numpy").run({k: v.copy() for k, v in feeds.items()})
    session = burnedge.Session(model, backend="opencl")
    got = session.run({k: v.copy() for k, v in feeds.items()})
    assert sorted(got) == sorted(want)
    for out, w in want.items():
        g = got[out]
        assert g.shape == w.shape and g.dtype == w.dtype, f"{out}: {g.dtype}{g.shape} != {w.dtype}{w.shape}"
        err = np.max(np.abs(g.astype(np.float64) - w)) / np.max(np.abs(w))
        print(f"{name} {out}: relative error {err:.3g}")
        assert err <= RTOL, f"{out}: relative error {err:.3g} > {RTOL:g}"
    if name == "transformer":  # two inputs, integer ones: queued runs give run's exact bits
        again = [session.run_async(feeds) for _ in range(3)]
        for f in again:
            for out, g in f.result().items():
                assert np.array_equal(g, got[out])
