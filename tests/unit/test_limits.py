"""Bounded import: each hostile model is the smallest that hung or exhausted memory before, and is now refused
(a LimitError naming the limit and how to raise it) or handled, within a few seconds.

The models: a constant-trip Loop of 10**9 (shape inference ran it), nested Loops that unroll into 16.7 M nodes, a
local-function bomb that inlines into 2**24 nodes, a 99-byte Expand that folds into 13.4 GiB, and a 20,000-node
chain. Nothing here runs the loops or allocates the bytes: `bounded` fails a test that takes too long.
"""

from __future__ import annotations

import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge import limits
from burnedge.cli import main
from burnedge.limits import LimitError

from .helpers import in_thread

OPSET = [helper.make_opsetid("", 17)]


def bounded(fn, seconds: float = 20.0):
    """fn()'s result or exception, failing the test when it runs longer than `seconds` (a daemon thread)."""
    t, result = in_thread(fn, seconds)
    if t.is_alive():
        pytest.fail(f"still running after {seconds} s (a hang)")
    if "error" in result:
        raise result["error"]
    return result.get("value")


def const(name: str, value) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value)), name=name)


def loop_model(trips: int, scan: bool = False, data_input: bool = False) -> onnx.ModelProto:
    """y = x + trips (a Loop adding 1 per iteration); with `scan`, also every iteration's value stacked."""
    body_outs = [
        helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
        helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [2]),
    ]
    body_nodes = [
        helper.make_node("Identity", ["c_in"], ["c_out"]),
        const("one", np.float32(1)),
        helper.make_node("Add", ["v_in", "one"], ["v_out"]),
    ]
    if scan:
        body_nodes.append(helper.make_node("Identity", ["v_out"], ["s_out"]))
        body_outs.append(helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [2]))
    body = helper.make_graph(
        body_nodes,
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [2]),
        ],
        body_outs,
    )
    outs = ["y"] + (["s"] if scan else [])
    nodes = [const("M", np.int64(trips)), const("c", np.bool_(True))]
    if not data_input:
        nodes.append(const("x", np.zeros(2, np.float32)))
    nodes.append(helper.make_node("Loop", ["M", "c", "x"], outs, body=body, name="loop"))
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])] if data_input else []
    g = helper.make_graph(
        nodes, "loop", inputs, [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs]
    )
    return helper.make_model(g, opset_imports=OPSET)


def test_a_billion_trip_constant_loop_does_not_hang_load():
    model = loop_model(10**9)
    assert len(model.SerializeToString()) < 400
    graph = bounded(lambda: burnedge.load(model)).graph  # neither run to fold it nor unrolled: kept as a Loop
    assert [n.op_type for n in graph.nodes] == ["Loop"] and graph.values["y"].shape == (2,)


def test_a_billion_trip_loop_on_data_gets_its_shapes_without_running():
    model = bounded(lambda: burnedge.load(loop_model(10**9, data_input=True)))
    assert [n.op_type for n in model.graph.nodes] == ["Loop"]
    assert model.graph.values["y"].shape == (2,)


def test_scan_outputs_of_a_long_loop_are_shaped_statically():
    model = bounded(lambda: burnedge.load(loop_model(5000, scan=True, data_input=True)))
    assert model.graph.values["s"].shape == (5000, 2) and model.graph.values["y"].shape == (2,)
    small = burnedge.load(loop_model(3, scan=True, data_input=True))  # unrolled: the same semantics
    out = burnedge.Session(small).run({"x": np.array([1, 2], np.float32)})
    np.testing.assert_array_equal(out["s"], [[2, 3], [3, 4], [4, 5]])


def test_a_loop_whose_body_computes_its_condition_is_refused_with_the_reason():
    model = loop_model(10**9, scan=True, data_input=True)
    body = model.graph.node[-1].attribute[0].g
    body.node[0].CopyFrom(helper.make_node("Not", ["c_in"], ["c_out"]))  # a condition the body computes
    with pytest.raises(burnedge.NotStaticError, match="condition"):
        bounded(lambda: burnedge.load(model))


def nested_loops(outer: int, inner: int) -> onnx.ModelProto:
    """Loop(outer) { Loop(inner) { v + 1 } }: each within the per-loop unroll size, together outer * inner."""
    model = loop_model(inner, data_input=True)
    inner_loop = model.graph.node[-1]
    inner_loop.input[2] = "v_in"
    inner_loop.output[0] = "v_out"
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]), *model.graph.node[:-1], inner_loop],
        "outer_body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [2]),
        ],
        [
            helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [2]),
        ],
    )
    nodes = [
        const("M", np.int64(outer)),
        const("c", np.bool_(True)),
        helper.make_node("Loop", ["M", "c", "x"], ["y"], body=body, name="outer"),
    ]
    g = helper.make_graph(
        nodes,
        "nested",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    return helper.make_model(g, opset_imports=OPSET)


def test_nested_loops_do_not_unroll_into_millions_of_nodes():
    with pytest.raises(LimitError, match="max_unrolled_trips") as exc:
        bounded(lambda: burnedge.load(nested_loops(4096, 4096)))
    assert "BURNEDGE_MAX_UNROLLED_TRIPS" in str(exc.value)
    kept = bounded(lambda: burnedge.load(nested_loops(5, 10_000)))  # the inner Loop is too long to unroll: kept
    assert [n.op_type for n in kept.graph.nodes].count("Loop") == 5
    small = burnedge.load(nested_loops(3, 4))  # within the limits: unrolled and right
    out = burnedge.Session(small).run({"x": np.zeros(2, np.float32)})
    np.testing.assert_array_equal(out["y"], [12, 12])


def function_bomb(levels: int) -> onnx.ModelProto:
    """f0(x) = Relu(x); f_k(x) = f_{k-1}(f_{k-1}(x)): the graph calls f_levels once, 2**levels Relus inlined."""
    funcs = [helper.make_function("bomb", "f0", ["x"], ["y"], [helper.make_node("Relu", ["x"], ["y"])], OPSET)]
    for k in range(1, levels + 1):
        nodes = [
            helper.make_node(f"f{k - 1}", ["x"], ["t"], domain="bomb"),
            helper.make_node(f"f{k - 1}", ["t"], ["y"], domain="bomb"),
        ]
        funcs.append(helper.make_function("bomb", f"f{k}", ["x"], ["y"], nodes, OPSET))
    g = helper.make_graph(
        [helper.make_node(f"f{levels}", ["x"], ["y"], domain="bomb")],
        "bomb",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    return helper.make_model(g, opset_imports=[*OPSET, helper.make_opsetid("bomb", 1)], functions=funcs)


def test_a_function_bomb_is_refused_before_it_is_inlined():
    model = function_bomb(24)
    assert len(model.SerializeToString()) < 3000
    with pytest.raises(LimitError, match="max_nodes") as exc:
        bounded(lambda: burnedge.load(model))
    assert str(2**24) in str(exc.value)
    ok = burnedge.load(function_bomb(3))  # 8 Relus
    assert len(ok.graph.nodes) <= 8


def test_a_recursive_function_is_refused():
    model = function_bomb(1)
    model.functions[0].node[0].op_type = "f1"
    model.functions[0].node[0].domain = "bomb"
    with pytest.raises(burnedge.ModelError, match="calls itself"):
        bounded(lambda: burnedge.load(model))


def expand_bomb(side: int = 60000) -> onnx.ModelProto:
    nodes = [
        const("v", np.float32(1)),
        const("shape", np.array([side, side], np.int64)),
        helper.make_node("Expand", ["v", "shape"], ["big"]),
        helper.make_node("ReduceSum", ["big"], ["y"]),
    ]
    g = helper.make_graph(nodes, "e", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(g, opset_imports=OPSET)


@pytest.mark.parametrize("op", ["Expand", "Tile", "ConstantOfShape", "Add"])
def test_folding_into_gigabytes_is_refused_before_allocating(op):
    model = expand_bomb()
    if op == "Tile":
        model.graph.node[2].CopyFrom(helper.make_node("Tile", ["v2", "shape"], ["big"]))
        model.graph.node.insert(0, const("v2", np.ones((1, 1), np.float32)))
    elif op == "ConstantOfShape":
        model.graph.node[2].CopyFrom(helper.make_node("ConstantOfShape", ["shape"], ["big"]))
    elif op == "Add":  # a [side, 1] + [1, side] broadcast
        model.graph.node[2].CopyFrom(helper.make_node("Add", ["col", "row"], ["big"]))
        model.graph.node.insert(0, helper.make_node("Reshape", ["r", "s1"], ["row"]))
        model.graph.node.insert(0, helper.make_node("Reshape", ["r", "s0"], ["col"]))
        model.graph.node.insert(0, helper.make_node("Range", ["z", "n", "one"], ["r"]))
        for name, value in (("z", 0.0), ("n", 60000.0), ("one", 1.0)):
            model.graph.node.insert(0, const(name, np.float32(value)))
        model.graph.node.insert(0, const("s0", np.array([-1, 1], np.int64)))
        model.graph.node.insert(0, const("s1", np.array([1, -1], np.int64)))
    assert op != "Expand" or len(model.SerializeToString()) < 200
    with pytest.raises(LimitError, match="max_folded_bytes") as exc:
        bounded(lambda: burnedge.load(model), 10)
    assert "BURNEDGE_MAX_FOLDED_BYTES" in str(exc.value) and str(60000 * 60000 * 4) in str(exc.value)


def test_a_limit_is_raised_by_keyword_or_environment(monkeypatch):
    with limits.raised(max_folded_bytes=10), pytest.raises(LimitError, match="max_folded_bytes = 10;"):
        burnedge.load(expand_bomb(side=4))
    monkeypatch.setenv("BURNEDGE_MAX_FOLDED_BYTES", "10")
    with pytest.raises(LimitError):
        burnedge.load(expand_bomb(side=4))
    with limits.raised(max_folded_bytes=1000):  # the keyword wins over the environment
        y = burnedge.Session(burnedge.load(expand_bomb(side=4))).run({})["y"]
    assert y.reshape(-1).tolist() == [16.0]
    monkeypatch.setenv("BURNEDGE_MAX_FOLDED_BYTES", "lots")
    with pytest.raises(LimitError, match="whole number"):
        limits.get("max_folded_bytes")


def test_the_cli_says_which_limit_and_exits_2(tmp_path, capsys):
    path = tmp_path / "bomb.onnx"
    onnx.save(function_bomb(24), str(path))
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err
    assert "max_nodes" in err and "BURNEDGE_MAX_NODES" in err and len(err.strip().splitlines()) == 1


def chain(n: int) -> onnx.ModelProto:
    ops = ["Relu", "Neg", "Abs", "Sigmoid"]
    nodes = [helper.make_node(ops[i % 4], [f"t{i}"], [f"t{i + 1}"], name=f"n{i}") for i in range(n)]
    g = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info(f"t{n}", TensorProto.FLOAT, [1, 8])],
    )
    return helper.make_model(g, opset_imports=OPSET)


def test_a_20000_node_chain_compiles_in_reasonable_time():
    """An in-place chain shares one arena buffer; the planner scanned its tensors at every step (22 s; now 1.4 s)."""
    model = burnedge.load(chain(20000))
    t0 = time.perf_counter()
    sess = bounded(lambda: burnedge.Session(model), 15)  # the compile alone
    elapsed = time.perf_counter() - t0
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(1, 8)
    want = x
    for i in range(20000):
        want = [np.maximum(want, 0), -want, np.abs(want), 1 / (1 + np.exp(-want))][i % 4]
    np.testing.assert_allclose(sess.run({"t0": x})["t20000"], want, rtol=1e-5)
    assert elapsed < 15


def test_a_long_loop_inside_a_branch_is_not_run_to_infer_shapes():
    """An If on a graph input: both branches run once to learn their shapes; one holds a 10**9-trip Loop."""
    inner = loop_model(10**9, data_input=True)
    then_branch = helper.make_graph(
        list(inner.graph.node), "then", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])]
    )
    else_branch = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y2"])],
        "else",
        [],
        [helper.make_tensor_value_info("y2", TensorProto.FLOAT, [2])],
    )
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["out"], then_branch=then_branch, else_branch=else_branch, name="if")],
        "branchy",
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2])],
    )
    with pytest.raises(LimitError, match="max_fold_trips"):
        bounded(lambda: burnedge.load(helper.make_model(g, opset_imports=OPSET)))


def test_a_loop_body_of_the_wrong_arity_is_a_model_error():
    model = loop_model(10**9, data_input=True)
    body = model.graph.node[-1].attribute[0].g
    del body.output[1]  # the carried value's output gone
    with pytest.raises(burnedge.ModelError, match="gives 1 outputs"):
        bounded(lambda: burnedge.load(model))
