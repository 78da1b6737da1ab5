"""The model suite on the C backend, exported to edge bundles as users do: same answers as the numpy reference,
an arena close to its lower bound, and the fusions the plan promises, seen through `burnedge inspect --json`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import burnedge
from burnedge.cli import main

from .test_models import suite

RTOL = 1e-4  # max|C - numpy| / max|numpy|, per output


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = os.environ.get("BURNEDGE_MODEL_CACHE")
    return Path(env) if env else tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def bundles(model_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("bundles")
    return {
        name: burnedge.export(suite.build_model(name, model_cache), out / f"{name}.bedge", test_vectors=1)
        for name in sorted(suite.MODELS)
    }


def _inspect(path: Path, capsys) -> dict:
    assert main(["inspect", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", sorted(suite.MODELS))
def test_c_matches_numpy_and_arena_is_tight(name, model_cache, bundles, capsys):
    path = suite.build_model(name, model_cache)
    feeds = suite.example_feeds(path, seed=1)
    want = burnedge.Session(burnedge.load(path), backend="numpy").run(feeds)
    got = burnedge.Session(bundles[name], backend="c").run(feeds)
    for k, w in want.items():
        assert got[k].shape == w.shape and got[k].dtype == w.dtype
        err = np.max(np.abs(got[k].astype(np.float64) - w)) / np.max(np.abs(w))
        assert err <= RTOL, f"{k}: relative error {err:.3g}"
    info = _inspect(bundles[name], capsys)
    assert info["arena_bytes"] <= 1.10 * info["arena_lower_bound_bytes"], info["arena_bytes"]


@pytest.mark.parametrize("name", sorted(suite.MODELS))
def test_c_results_do_not_depend_on_threads(name, model_cache, bundles):
    """Every output element is computed by one thread in a fixed order (kernels/burnedge.h): 1, 2 and 4 threads
    give the same bits, whichever worker of the pool ran which chunk."""
    feeds = suite.example_feeds(suite.build_model(name, model_cache), seed=2)
    outs = {t: burnedge.Session(bundles[name], threads=t).run(feeds) for t in (1, 2, 4)}
    for t in (2, 4):
        for k, want in outs[1].items():
            np.testing.assert_array_equal(outs[t][k], want, err_msg=f"{name} {k}: threads={t} differs from 1")


def test_transformer_gelu_chain_is_one_step(bundles, capsys):
    steps = _inspect(bundles["transformer"], capsys)["steps"]
    gelu = [s["ops"] for s in steps if "Erf" in s["ops"]]
    assert len(gelu) == 2  # one per encoder layer
    for ops in gelu:  # the erf-GELU chain x * (erf(x / sqrt(2)) + 1) / 2 sits whole in one step
        assert {"Div", "Erf", "Add", "Mul"} <= set(ops)
        assert sum(1 for s in steps if "Erf" in s["ops"]) == 2


def test_conv_batchnorm_relu6_is_one_step_per_conv(bundles, model_cache, capsys):
    steps = _inspect(bundles["mobilenet_v2"], capsys)["steps"]
    convs = [s["ops"] for s in steps if "Conv" in s["ops"]]
    n_conv = sum(
        1 for n in burnedge.load(suite.build_model("mobilenet_v2", model_cache)).graph.nodes if n.op_type == "Conv"
    )
    assert len(convs) == n_conv
    with_clip = [ops for ops in convs if "Clip" in ops]
    assert with_clip and all(ops[:3] == ["Conv", "BatchNormalization", "Clip"] for ops in with_clip)
    assert not any(s["ops"] in (["BatchNormalization"], ["Clip"]) for s in steps)
