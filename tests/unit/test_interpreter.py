"""The one whole-graph interpreter: values in the caller's store, an observer after every node, outputs checked
against the graph, subgraphs by position."""

from __future__ import annotations

import numpy as np
import pytest

from burnedge.errors import BurnedgeError
from burnedge.ir import Graph, Node, Value
from burnedge.ops import for_onnx
from burnedge.ops.interpreter import interpret, run_graph
from burnedge.quantize.observe import observe_floats, trace

F32 = np.dtype(np.float32)


def _graph() -> Graph:
    """y = relu(x + c) * x, with c a constant."""
    c = np.array([1.0, -2.0, 3.0], np.float32)
    values = {
        "x": Value("x", F32, (3,)),
        "c": Value("c", F32, (3,), c),
        "s": Value("s", F32, (3,)),
        "r": Value("r", F32, (3,)),
        "y": Value("y", F32, (3,)),
    }
    nodes = [
        Node(for_onnx("Add", 17), "add", ["x", "c"], ["s"]),
        Node(for_onnx("Relu", 17), "relu", ["s"], ["r"]),
        Node(for_onnx("Mul", 17), "mul", ["r", "x"], ["y"]),
    ]
    g = Graph("g", ["x"], ["y"], nodes, values, 17)
    g.verify()
    return g


def test_interpret_store_and_observer():
    g, x = _graph(), np.array([0.5, 1.0, -4.0], np.float32)
    store: dict = {}
    seen: list[tuple[str, list]] = []
    out = interpret(g, {"x": x}, store=store, observe=lambda node, outs: seen.append((node.name, outs)))
    want = np.maximum(x + g.values["c"].data, 0) * x
    assert np.array_equal(out["y"], want)
    assert [n for n, _ in seen] == ["add", "relu", "mul"] and np.array_equal(seen[-1][1][0], want)
    assert set(store) == {"x", "s", "r", "y"}  # constants are read from the graph, never copied
    assert run_graph(g, [x], {})[0].tolist() == want.tolist()


def test_a_wrong_output_type_names_the_node():
    g = _graph()
    g.values["r"] = Value("r", np.dtype(np.float64), (3,))
    with pytest.raises(BurnedgeError, match=r"node 'relu' \(Relu\) produced float32\[3\] for 'r'; the plan expects"):
        interpret(g, {"x": np.zeros(3, np.float32)})
    interpret(g, {"x": np.zeros(3, np.float32)}, check=False)


def test_calibration_observes_every_float_tensor_once():
    g, x = _graph(), np.array([0.5, 1.0, -4.0], np.float32)
    names: list[str] = []
    observe_floats(g, {"x": x}, lambda name, arr: names.append(name))
    assert names == ["x", "s", "r", "y"] == [n for n, _ in trace(g, {"x": x})]
