"""Graph passes: every model keeps its meaning through `optimize`, and the fusions make the steps they promise.

Models: the suite (tests/models, built once per session; $BURNEDGE_MODEL_CACHE reuses built files) and the
exported fixtures (tests/exported), compared on the numpy reference before and after; small onnx.helper graphs
pin each pattern (and the cases that must not fuse); fused nodes are also lowered by the C backend.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge import compiler
from burnedge.ir import Graph, Value
from burnedge.passes import DEFAULT_PIPELINE, optimize
from tests.models import suite

ROOT = Path(__file__).resolve().parents[1]
RTOL = 1e-5


EXPORTED = json.loads((ROOT / "exported" / "MANIFEST.json").read_text())["models"]
HAS_CC = shutil.which(os.environ.get("CC", "gcc")) is not None


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = os.environ.get("BURNEDGE_MODEL_CACHE")
    return Path(env) if env else tmp_path_factory.mktemp("models")


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


# -- whole models -------------------------------------------------------------------------------------------------
def suite_graph(name: str, cache: Path) -> tuple[Graph, dict[str, np.ndarray]]:
    path = suite.build_model(name, cache)
    return burnedge.load(path).graph, suite.example_feeds(path, seed=0)


def exported_graph(entry: dict) -> tuple[Graph, dict[str, np.ndarray]]:
    shapes = {k: tuple(v) for k, v in (entry.get("input_shapes") or {}).items()}
    graph = burnedge.load(ROOT / "exported" / entry["file"], input_shapes=shapes or None).graph
    with np.load(ROOT / "exported" / entry["npz"]) as z:
        feeds = {k[len("input:") :]: z[k] for k in z.files if k.startswith("input:")}
    return graph, feeds


def test_default_pipeline_order():
    assert DEFAULT_PIPELINE == (
        "fold_constants", "dce", "fold_batchnorm", "fuse_layernorm", "fuse_epilogue", "fuse_elementwise", "dce",
    )  # fmt: skip


@pytest.mark.parametrize("name", sorted(suite.MODELS))
def test_suite_model_keeps_meaning(name, model_cache):
    g0, feeds = suite_graph(name, model_cache)
    g1 = same_meaning(g0, feeds)
    assert len(g1.nodes) <= len(g0.nodes)


@pytest.mark.parametrize("entry", EXPORTED, ids=[e["name"] for e in EXPORTED])
def test_exported_model_keeps_meaning(entry):
    g0, feeds = exported_graph(entry)
    same_meaning(g0, feeds)


def test_mobilenet_v2_conv_bn_relu6_is_one_step(model_cache):
    g0, _ = suite_graph("mobilenet_v2", model_cache)
    g1 = optimize(g0.copy())
    clips = ops(g0)["Clip"]
    relu6 = [n for n in g1.nodes if n.op_type == "FusedConv" and n.attrs["activation"] == "Clip"]
    assert clips > 0 and len(relu6) == clips
    for n in relu6:
        assert origin_ops(n) == ["Conv", "BatchNormalization", "Clip"]
        assert n.attrs["activation_params"] == [0.0, 6.0]
    assert not {"BatchNormalization", "Clip", "Add"} & set(ops(g1))


@pytest.mark.parametrize("name", ["resnet8", "resnet18"])
def test_resnet_conv_bn_add_relu_is_one_step(name, model_cache):
    g0, _ = suite_graph(name, model_cache)
    g1 = optimize(g0.copy())
    blocks = [n for n in g1.nodes if n.op_type == "FusedConv" and len(n.inputs) == 4]
    assert len(blocks) == ops(g0)["Add"] > 0
    for n in blocks:
        assert origin_ops(n) == ["Conv", "BatchNormalization", "Add", "Relu"]
        assert n.attrs["activation"] == "Relu"
    assert not {"BatchNormalization", "Add", "Relu"} & set(ops(g1))


def test_transformer_erf_gelu_joins_the_matmul(model_cache):
    g0, _ = suite_graph("transformer", model_cache)
    g1 = optimize(g0.copy())
    gelus = [n for n in g1.nodes if "Erf" in origin_ops(n)]
    assert len(gelus) == ops(g0)["Erf"] > 0
    for n in gelus:
        assert n.op_type == "FusedMatMul" and n.attrs["activation"] == "Gelu"
        assert origin_ops(n) == ["MatMul", "Add", "Div", "Erf", "Add", "Mul", "Mul"]
    assert "Erf" not in ops(g1)


def test_paddle_layernorm_and_gelu():
    entry = next(e for e in EXPORTED if e["name"] == "paddle_mlp")
    g0, feeds = exported_graph(entry)
    g1 = same_meaning(g0, feeds)
    (ln,) = [n for n in g1.nodes if n.op_type == "LayerNormalization"]
    assert origin_ops(ln) == ["ReduceMean", "Sub", "Pow", "ReduceMean", "Add", "Sqrt", "Div", "Mul", "Add"]
    (gelu,) = [n for n in g1.nodes if "Erf" in origin_ops(n)]
    assert gelu.op_type == "Elementwise" and origin_ops(gelu) == ["Div", "Erf", "Add", "Mul", "Mul"]
    assert not {"ReduceMean", "Sqrt", "Pow", "Erf"} & set(ops(g1))


# -- small graphs -------------------------------------------------------------------------------------------------
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


def bn_inits(c: int) -> dict:
    rng = np.random.default_rng(c)
    scale, var = rng.uniform(0.5, 2, (2, c)).astype(np.float32)
    bias, mean = rng.standard_normal((2, c)).astype(np.float32)
    return {"bn_s": scale, "bn_b": bias, "bn_m": mean, "bn_v": var}


def bn(x, y):
    return node("BatchNormalization", [x, "bn_s", "bn_b", "bn_m", "bn_v"], [y])


BN_CASES = {
    "conv": ([node("Conv", ["x", "w", "cb"], ["h"], pads=[1, 1, 1, 1])], {"w": (6, 3, 3, 3), "cb": (6,)}, 6),
    "conv_no_bias_group": ([node("Conv", ["x", "w"], ["h"], group=3)], {"w": (6, 1, 3, 3)}, 6),
    "conv_transpose_group": (
        [node("ConvTranspose", ["x", "w"], ["h"], group=3, strides=[2, 2])],
        {"w": (3, 2, 3, 3)},
        6,
    ),
    "conv_then_bias_add": (
        [node("Conv", ["x", "w"], ["h0"]), node("Add", ["h0", "pb"], ["h"])],
        {"w": (6, 3, 1, 1), "pb": (1, 6, 1, 1)},
        6,
    ),
}
GEMM_CASES = {
    "gemm": ([node("Gemm", ["a", "B", "C"], ["h"], alpha=0.5, beta=2.0)], {"B": (8, 5), "C": (5,)}),
    "gemm_transB_no_C": ([node("Gemm", ["a", "B"], ["h"], transB=1)], {"B": (5, 8)}),
    "gemm_full_C": ([node("Gemm", ["a", "B", "C"], ["h"])], {"B": (8, 5), "C": (4, 5)}),
    "matmul": ([node("MatMul", ["a", "B"], ["h"])], {"B": (8, 5)}),
}


@pytest.mark.parametrize("case", sorted(BN_CASES))
@pytest.mark.parametrize("opset", [9, 17])
def test_fold_batchnorm_conv(case, opset):
    nodes, inits, c = BN_CASES[case]
    g0 = make([*nodes, bn("h", "y")], {"x": (2, 3, 5, 5)}, ["y"], {**inits, **bn_inits(c)}, opset)
    g1 = same_meaning(g0, random_feeds(g0), ["fold_constants", "dce", "fold_batchnorm", "dce"])
    (folded,) = g1.nodes
    assert origin_ops(folded)[-1] == "BatchNormalization" and origin_ops(folded)[0] in ("Conv", "ConvTranspose")


@pytest.mark.parametrize("case", sorted(GEMM_CASES))
def test_fold_batchnorm_gemm_matmul(case):
    nodes, inits = GEMM_CASES[case]
    g0 = make([*nodes, bn("h", "y"), node("Relu", ["y"], ["z"])], {"a": (4, 8)}, ["z"], {**inits, **bn_inits(5)})
    g1 = same_meaning(g0, random_feeds(g0))
    (fused,) = g1.nodes
    assert fused.op_type in ("FusedGemm", "FusedMatMul") and fused.attrs["activation"] == "Relu"
    assert "BatchNormalization" in origin_ops(fused)


def test_batchnorm_not_folded_when_the_conv_output_is_read_elsewhere():
    nodes = [node("Conv", ["x", "w"], ["h"]), bn("h", "y"), node("Add", ["y", "h"], ["z"])]
    g0 = make(nodes, {"x": (1, 3, 4, 4)}, ["z"], {"w": (3, 3, 1, 1), **bn_inits(3)})
    g1 = same_meaning(g0, random_feeds(g0))
    assert ops(g1)["BatchNormalization"] == 1
    g0 = make(nodes[:2], {"x": (1, 3, 4, 4)}, ["y", "h"], {"w": (3, 3, 1, 1), **bn_inits(3)})
    assert ops(same_meaning(g0, random_feeds(g0)))["BatchNormalization"] == 1


# -- LayerNorm ----------------------------------------------------------------------------------------------------
def layernorm_nodes(square: str, divide: str, affine: bool, axes=(-1,), opset=17) -> tuple[list, dict]:
    ax = {"axes": list(axes)} if opset < 18 else {}
    extra = ["axes"] if opset >= 18 else []
    nodes = [node("ReduceMean", ["x", *extra], ["m"], **ax), node("Sub", ["x", "m"], ["d"])]
    nodes.append(node("Pow", ["d", "two"], ["p"]) if square == "pow" else node("Mul", ["d", "d"], ["p"]))
    nodes += [
        node("ReduceMean", ["p", *extra], ["v"], **ax),
        node("Add", ["eps", "v"], ["e"]),
        node("Sqrt", ["e"], ["s"]),
    ]
    if divide == "div":
        nodes.append(node("Div", ["d", "s"], ["n"]))
    else:
        nodes += [node("Reciprocal", ["s"], ["r"]), node("Mul", ["r", "d"], ["n"])]
    inits = {"two": np.float32(2.0), "eps": np.float32(1e-5), "axes": np.array(axes, np.int64)}
    if affine:
        nodes += [node("Mul", ["n", "gamma"], ["g"]), node("Add", ["g", "beta"], ["y"])]
        inits.update(gamma=(6,), beta=(1, 6))
    else:
        nodes.append(node("Identity", ["n"], ["y"]))
    return nodes, inits


@pytest.mark.parametrize("square", ["pow", "mul"])
@pytest.mark.parametrize("divide", ["div", "reciprocal"])
@pytest.mark.parametrize("affine", [True, False])
def test_fuse_layernorm_variants(square, divide, affine):
    nodes, inits = layernorm_nodes(square, divide, affine)
    g0 = make(nodes, {"x": (2, 3, 6)}, ["y"], inits)
    g1 = same_meaning(g0, random_feeds(g0))
    (ln,) = [n for n in g1.nodes if n.op_type == "LayerNormalization"]
    assert len(origin_ops(ln)) == 7 + (divide == "reciprocal") + 2 * affine
    assert not {"ReduceMean", "Sqrt", "Sub", "Div"} & set(ops(g1))


def test_fuse_layernorm_two_axes_opset18():
    nodes, inits = layernorm_nodes("pow", "div", True, axes=(-2, -1), opset=18)
    inits.update(gamma=(3, 6), beta=(6,))
    g0 = make(nodes, {"x": (2, 3, 6)}, ["y"], inits, opset=18)
    (ln,) = same_meaning(g0, random_feeds(g0)).nodes
    assert ln.op_type == "LayerNormalization" and ln.attrs["axis"] == 1


def test_layernorm_not_fused_when_the_centered_value_is_an_output():
    nodes, inits = layernorm_nodes("pow", "div", True)
    g0 = make(nodes, {"x": (2, 3, 6)}, ["y", "d"], inits)
    assert "LayerNormalization" not in ops(same_meaning(g0, random_feeds(g0)))


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
