"""Fusion passes: epilogues (activations, GELU and HardSwish decompositions into the producer) and elementwise chains
(one burnedge.Elementwise node), with the cases that must not fuse; the C backend lowers what they make."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import burnedge
from burnedge import compiler
from burnedge.ir import Graph, Value
from burnedge.passes import optimize
from tests.models import suite
from tests.unit.passes_graphs import (
    EXPORTED,
    HAS_CC,
    RTOL,
    exported_graph,
    make,
    node,
    ops,
    origin_ops,
    random_feeds,
    rel_err,
    run_numpy,
    same_meaning,
    suite_graph,
)

# -- epilogue -----------------------------------------------------------------------------------------------------
GELU_FORMS = {
    "torch": [
        node("Div", ["h", "sqrt2"], ["q"]), node("Erf", ["q"], ["e"]), node("Add", ["e", "one"], ["a"]),
        node("Mul", ["h", "a"], ["m"]), node("Mul", ["m", "half"], ["y"]),
    ],
    "half_first": [
        node("Mul", ["h", "inv_sqrt2"], ["q"]), node("Erf", ["q"], ["e"]), node("Add", ["one", "e"], ["a"]),
        node("Mul", ["half", "h"], ["m"]), node("Mul", ["m", "a"], ["y"]),
    ],
    "div_two": [
        node("Mul", ["h", "inv_sqrt2"], ["q"]), node("Erf", ["q"], ["e"]), node("Add", ["e", "one"], ["a"]),
        node("Mul", ["a", "h"], ["m"]), node("Div", ["m", "two"], ["y"]),
    ],
}  # fmt: skip
CONSTS = {"sqrt2": np.float32(np.sqrt(2)), "inv_sqrt2": np.float32(1 / np.sqrt(2)), "one": np.float32(1),
          "half": np.float32(0.5), "two": np.float32(2), "three": np.float32(3), "six": np.float32(6),
          "zero": np.float32(0)}  # fmt: skip


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = os.environ.get("BURNEDGE_MODEL_CACHE")
    return Path(env) if env else tmp_path_factory.mktemp("models")


@pytest.mark.parametrize("form", sorted(GELU_FORMS))
def test_epilogue_decomposed_gelu_after_matmul(form):
    nodes = [node("MatMul", ["x", "W"], ["mm"]), node("Add", ["b", "mm"], ["h"]), *GELU_FORMS[form]]
    g0 = make(nodes, {"x": (2, 3, 8)}, ["y"], {"W": (8, 5), "b": (5,), **CONSTS})
    (fused,) = same_meaning(g0, random_feeds(g0)).nodes
    assert fused.op_type == "FusedMatMul" and fused.attrs["activation"] == "Gelu" and len(fused.inputs) == 3


def test_epilogue_decomposed_hardswish_after_conv_and_residual():
    nodes = [
        node("Conv", ["x", "w"], ["c"]), node("Add", ["c", "cb"], ["h0"]), node("Add", ["r", "h0"], ["h"]),
        node("Add", ["h", "three"], ["t"]), node("Clip", ["t", "zero", "six"], ["k"]),
        node("Mul", ["h", "k"], ["m"]), node("Div", ["m", "six"], ["y"]),
    ]  # fmt: skip
    g0 = make(nodes, {"x": (1, 3, 4, 4), "r": (1, 4, 4, 4)}, ["y"], {"w": (4, 3, 1, 1), "cb": (4, 1, 1), **CONSTS})
    (fused,) = same_meaning(g0, random_feeds(g0)).nodes
    assert fused.op_type == "FusedConv" and fused.attrs["activation"] == "HardSwish"
    assert fused.inputs[3] == "r" and origin_ops(fused)[:3] == ["Conv", "Add", "Add"]


ACTIVATIONS = {
    "Relu": (node("Relu", ["h"], ["y"]), "Relu", []),
    "Relu6_v11": (node("Clip", ["h", "zero", "six"], ["y"]), "Clip", [0.0, 6.0]),
    "Relu_as_clip": (node("Clip", ["h", "zero"], ["y"]), "Relu", []),
    "LeakyRelu": (node("LeakyRelu", ["h"], ["y"], alpha=0.2), "LeakyRelu", [pytest.approx(0.2)]),
    "HardSigmoid": (node("HardSigmoid", ["h"], ["y"]), "HardSigmoid", [pytest.approx(0.2), 0.5]),
    "HardSwish": (node("HardSwish", ["h"], ["y"]), "HardSwish", []),
    "Sigmoid": (node("Sigmoid", ["h"], ["y"]), "Sigmoid", []),
    "Tanh": (node("Tanh", ["h"], ["y"]), "Tanh", []),
    "Gelu": (node("Gelu", ["h"], ["y"]), "Gelu", []),
}


@pytest.mark.parametrize("act", sorted(ACTIVATIONS))
@pytest.mark.parametrize("anchor", ["Gemm", "MatMul", "Conv"])
def test_epilogue_activations(anchor, act):
    act_node, name, params = ACTIVATIONS[act]
    if anchor == "Conv":
        first, shape, inits = node("Conv", ["x", "w", "cb"], ["h"]), (1, 3, 4, 4), {"w": (4, 3, 1, 1), "cb": (4,)}
    else:
        first, shape, inits = node(anchor, ["x", "w"], ["h0"]), (3, 8), {"w": (8, 4), "cb": (1, 4)}
    nodes = [first, act_node] if anchor == "Conv" else [first, node("Add", ["h0", "cb"], ["h"]), act_node]
    g0 = make(nodes, {"x": shape}, ["y"], {**inits, **CONSTS}, opset=20)
    (fused,) = same_meaning(g0, random_feeds(g0)).nodes
    assert fused.op_type == "Fused" + anchor and fused.attrs["activation"] == name
    assert fused.attrs["activation_params"] == params


def test_epilogue_clip_opset6_attributes():
    nodes = [node("Conv", ["x", "w"], ["h"]), node("Clip", ["h"], ["y"], min=0.0, max=6.0)]
    g0 = make(nodes, {"x": (1, 3, 4, 4)}, ["y"], {"w": (4, 3, 1, 1)}, opset=9)
    (fused,) = same_meaning(g0, random_feeds(g0)).nodes
    assert fused.attrs["activation"] == "Clip" and fused.attrs["activation_params"] == [0.0, 6.0]
    assert fused.inputs == ["x", "w"]


def test_epilogue_stops_at_an_intermediate_graph_output():
    nodes = [node("MatMul", ["x", "w"], ["h0"]), node("Add", ["h0", "b"], ["h"]), node("Relu", ["h"], ["y"])]
    g0 = make(nodes, {"x": (3, 8)}, ["y", "h"], {"w": (8, 4), "b": (4,)})
    g1 = same_meaning(g0, random_feeds(g0))
    assert [n.op_type for n in g1.nodes] == ["FusedMatMul", "Relu"] and g1.nodes[0].outputs == ["h"]
    g0 = make(nodes, {"x": (3, 8)}, ["y", "h0"], {"w": (8, 4), "b": (4,)})
    assert ops(same_meaning(g0, random_feeds(g0)))["MatMul"] == 1


def test_epilogue_leaves_a_broadcast_add_alone():
    nodes = [node("MatMul", ["x", "w"], ["h0"]), node("Add", ["h0", "b"], ["y"])]
    g0 = make(nodes, {"x": (3, 8)}, ["y"], {"w": (8, 4), "b": (3, 1)})
    assert ops(same_meaning(g0, random_feeds(g0)))["MatMul"] == 1


# -- elementwise chains -------------------------------------------------------------------------------------------
def only_elementwise(g1: Graph):
    (fused,) = g1.nodes
    assert fused.op_type == "Elementwise"
    body: Graph = fused.attrs["body"]
    body.verify()
    assert body.inputs == fused.inputs and body.outputs == fused.outputs
    for name, v in body.values.items():
        assert isinstance(v, Value) and v.dtype is not None and v.shape is not None, name
        assert not v.is_const or v.data.size == 1, name
    assert {n for b in body.nodes for n in b.uses()} <= set(body.values)
    return fused


HARDSWISH = [
    node("Add", ["x", "three"], ["t"]), node("Clip", ["t", "zero", "six"], ["k"]),
    node("Mul", ["x", "k"], ["m"]), node("Div", ["m", "six"], ["y"]),
]  # fmt: skip


def test_hardswish_chain_is_one_elementwise():
    g0 = make(HARDSWISH, {"x": (2, 5, 7)}, ["y"], CONSTS)
    fused = only_elementwise(same_meaning(g0, random_feeds(g0)))
    assert fused.inputs == ["x"] and origin_ops(fused) == ["Add", "Clip", "Mul", "Div"]


@pytest.mark.parametrize("form", sorted(GELU_FORMS))
def test_erf_gelu_chain_alone_is_one_elementwise(form):
    g0 = make(GELU_FORMS[form], {"h": (4, 9)}, ["y"], CONSTS)
    fused = only_elementwise(same_meaning(g0, random_feeds(g0)))
    assert fused.inputs == ["h"] and "Erf" in origin_ops(fused)


def test_sigmoid_gated_product_with_broadcast_and_tensor_constant():
    nodes = [node("Sigmoid", ["g"], ["s"]), node("Mul", ["x", "s"], ["m"]), node("Add", ["m", "bias"], ["y"])]
    g0 = make(nodes, {"x": (2, 4, 3, 3), "g": (2, 4, 1, 1)}, ["y"], {"bias": (4, 1, 1)})
    fused = only_elementwise(same_meaning(g0, random_feeds(g0)))
    assert fused.inputs == ["g", "x", "bias"]


def test_mixed_dtype_chain():
    nodes = [
        node("Greater", ["x", "zero"], ["c"]), node("Not", ["c"], ["nc"]), node("Cast", ["nc"], ["f"], to=1),
        node("Mul", ["f", "x"], ["m"]), node("Where", ["c", "x", "m"], ["w"]), node("Neg", ["w"], ["y"]),
    ]  # fmt: skip
    g0 = make(nodes, {"x": (3, 5)}, ["y"], CONSTS)
    only_elementwise(same_meaning(g0, random_feeds(g0)))


def test_chain_intermediate_that_is_a_graph_output_is_kept():
    g0 = make(HARDSWISH, {"x": (2, 5)}, ["y", "k"], CONSTS)
    g1 = same_meaning(g0, random_feeds(g0))
    assert "k" in {o for n in g1.nodes for o in n.outputs}
    (clip,) = [n for n in g1.nodes if "Clip" in origin_ops(n)]
    assert clip.outputs == ["k"]
    assert len(g1.nodes) == 2


def test_value_read_by_two_chains_is_not_fused_into_either():
    nodes = [node("Exp", ["x"], ["e"]), node("Neg", ["e"], ["a"]), node("Abs", ["e"], ["b"]),
             node("MatMul", ["a", "b"], ["y"])]  # fmt: skip
    g0 = make(nodes, {"x": (3, 3)}, ["y"])
    assert ops(same_meaning(g0, random_feeds(g0))) == Counter({"Exp": 1, "Neg": 1, "Abs": 1, "MatMul": 1})


# -- the C backend lowers what the passes make --------------------------------------------------------------------
def fused_only(graph: Graph) -> Graph:
    """A graph of `graph`'s burnedge-domain nodes alone: what they read from other nodes become graph inputs."""
    picked = [n for n in graph.nodes if n.op.domain == "burnedge"]
    made = {o for n in picked for o in n.outputs}
    inputs = list(dict.fromkeys(i for n in picked for i in n.uses() if i not in made and not graph.values[i].is_const))
    names = set(inputs) | made | {i for n in picked for i in n.uses()}
    outputs = [o for n in picked for o in n.outputs]
    return Graph(graph.name, inputs, outputs, picked, {k: graph.values[k] for k in names}, graph.opset)


@pytest.mark.skipif(not HAS_CC, reason="no C compiler")
@pytest.mark.parametrize(  # lstm is left out: LSTM, GRU and views only, nothing for the passes to fuse
    "name",
    [m for m in sorted(suite.MODELS) if m != "lstm"] + ["paddle_mlp", "torch_local_functions", "onnxscript_functions"],
)
def test_c_backend_runs_the_fused_nodes(name, model_cache):
    if name in suite.MODELS:
        g0 = suite_graph(name, model_cache)[0]
    else:
        g0 = exported_graph(next(e for e in EXPORTED if e["name"] == name))[0]
    g = fused_only(optimize(g0.copy()))
    assert g.nodes, "the passes fused nothing"
    feeds = random_feeds(g)
    want = run_numpy(g, feeds)
    got = compiler.compile(g, "c").executable.run(feeds)
    for out in want:
        assert rel_err(got[out], want[out]) <= RTOL, out


@pytest.mark.skipif(not HAS_CC, reason="no C compiler")
def test_c_backend_runs_elementwise_chains():
    g0 = make(
        [*HARDSWISH, node("Sigmoid", ["y"], ["s"]), node("Mul", ["s", "g"], ["z"])],
        {"x": (2, 5, 7), "g": (5, 1)},
        ["z"],
        CONSTS,
    )
    g1 = only_elementwise(optimize(g0.copy()))
    feeds = random_feeds(g0)
    s = burnedge.Session(burnedge.model.Model(g0, name="chain"), backend="c")
    assert rel_err(s.run(feeds)["z"], run_numpy(g0, feeds)["z"]) <= RTOL
    assert len(origin_ops(g1)) == 6
