"""A one-thread ("lean") int8 plan, what a microcontroller bundle is made with: its kernels take their least scratch
(channels-last convs in one-row bands, QMatMuls of fewer than six rows by be_qgemv_i8 without a packed A panel),
the generated code clamps any run to one thread, and it still gives the spec's bytes; with the int8 interface
(burnedge.quantize.interface) the arenas fall below TensorFlow Lite Micro's for the MLPerf Tiny networks."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import burnedge
from burnedge import compiler
from burnedge.backends.c import BACKEND
from burnedge.ops._eval import run_graph
from burnedge.quantize import quantize_model
from burnedge.quantize.interface import int8_interface
from tests.models import suite

TFLM_ARENA = {"ds_cnn": 24_272, "mobilenet_v1_025": 103_672, "resnet8": 55_984, "fc_autoencoder": 4_632}


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = os.environ.get("BURNEDGE_MODEL_CACHE")
    return Path(env) if env else tmp_path_factory.mktemp("models")


@pytest.mark.parametrize("name", sorted(TFLM_ARENA))
def test_lean_int8_plans_are_bit_exact_and_below_tflm(name: str, model_cache: Path):
    path = suite.build_model(name, model_cache)
    graph, _ = quantize_model(burnedge.load(path), [suite.example_feeds(path, s) for s in range(4)],
                              progress=False, report_batches=1, keep_float=())  # fmt: skip
    model = burnedge.Model(graph, name)
    wide = compiler.plan(model, BACKEND, compiler.Options(qdq=False))
    io = int8_interface(graph)
    assert list(io.inputs) == graph.inputs and list(io.outputs) == graph.outputs
    assert all(graph.values[n].dtype == np.int8 for n in [*graph.inputs, *graph.outputs])
    lean = compiler.compile(model, BACKEND, compiler.Options(qdq=False, max_threads=1, threads=4))
    assert lean.plan.arena_bytes < wide.arena_bytes and lean.plan.arena_bytes < TFLM_ARENA[name]
    source = BACKEND.artifacts(lean.plan).payload
    assert "if (threads > 1) threads = 1;" in source  # a run asking for 4 threads gets the 1 the scratch is for
    if name == "fc_autoencoder":
        assert "be_qgemv_i8(" in source and "be_qgemm_i8(" not in source
    for seed in (0, 1):
        feeds = io.quantize(suite.example_feeds(path, seed))
        want = run_graph(lean.plan.graph, [feeds[n] for n in lean.plan.graph.inputs], {})
        got = lean.executable.run(feeds)
        for n, w in zip(lean.plan.graph.outputs, want):
            assert got[n].dtype == np.int8 and np.array_equal(got[n], w), f"{name} {n}: not the spec's bytes"
