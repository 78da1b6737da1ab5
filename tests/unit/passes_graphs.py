"""What the pass tests share: graphs from the model suite and the exported fixtures, small onnx.helper graphs, and
the check that a pipeline keeps a graph's meaning on the numpy reference."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge import compiler
from burnedge.ir import Graph
from burnedge.passes import DEFAULT_PIPELINE, optimize
from tests.models import suite

ROOT = Path(__file__).resolve().parents[1]
RTOL = 1e-5


EXPORTED = json.loads((ROOT / "exported" / "MANIFEST.json").read_text())["models"]
HAS_CC = shutil.which(os.environ.get("CC", "gcc")) is not None


def rel_err(got: np.ndarray, want: np.ndarray) -> float:
    if want.size == 0:
        return 0.0
    diff = np.max(np.abs(np.asarray(got, np.float64) - np.asarray(want, np.float64)))
    return float(diff / max(float(np.max(np.abs(np.asarray(want, np.float64)))), 1e-30))


def random_feeds(graph: Graph, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for name in graph.inputs:
        v = graph.values[name]
        if v.dtype.kind == "f":
            feeds[name] = (rng.standard_normal(v.shape) * 3).astype(v.dtype)
        else:
            feeds[name] = rng.integers(0, 2, v.shape).astype(v.dtype)
    return feeds


def run_numpy(graph: Graph, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The numpy reference's outputs of `graph` as it is (its pipeline is empty)."""
    return compiler.compile(graph, "numpy").executable.run(feeds)


def same_meaning(g0: Graph, feeds: dict[str, np.ndarray], pipeline=DEFAULT_PIPELINE) -> Graph:
    """Optimizes a copy of g0, checks verify() and that the numpy reference agrees; returns the new graph."""
    g1 = optimize(g0.copy(), pipeline)
    g1.verify()
    want = run_numpy(g0, feeds)
    got = run_numpy(g1, feeds)
    assert sorted(got) == sorted(want)
    for name in want:
        assert got[name].shape == want[name].shape and got[name].dtype == want[name].dtype
        assert rel_err(got[name], want[name]) <= RTOL, name
    return g1


def ops(graph: Graph) -> Counter:
    return Counter(n.op_type for n in graph.nodes)


def origin_ops(node) -> list[str]:
    return [op for op, _ in node.onnx_ops]


def suite_graph(name: str, cache: Path) -> tuple[Graph, dict[str, np.ndarray]]:
    path = suite.build_model(name, cache)
    return burnedge.load(path).graph, suite.example_feeds(path, seed=0)


def exported_graph(entry: dict) -> tuple[Graph, dict[str, np.ndarray]]:
    shapes = {k: tuple(v) for k, v in (entry.get("input_shapes") or {}).items()}
    graph = burnedge.load(ROOT / "exported" / entry["file"], input_shapes=shapes or None).graph
    with np.load(ROOT / "exported" / entry["npz"]) as z:
        feeds = {k[len("input:") :]: z[k] for k in z.files if k.startswith("input:")}
    return graph, feeds


def make(nodes, inputs: dict, outputs: list[str], inits: dict | None = None, opset: int = 17) -> Graph:
    """A Graph from onnx.helper nodes: float32 inputs {name: shape}; inits {name: array or shape (random)}."""
    rng = np.random.default_rng(1)
    vis = [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)) for name, shape in inputs.items()]
    tensors = []
    for name, arr in (inits or {}).items():
        arr = rng.standard_normal(arr).astype(np.float32) if isinstance(arr, tuple) else np.asarray(arr)
        tensors.append(numpy_helper.from_array(arr, name))
    outs = [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outputs]
    g = helper.make_graph(nodes, "t", vis, outs, tensors)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    return burnedge.load(model).graph


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=f"{op}_{outs[0]}", **attrs)
