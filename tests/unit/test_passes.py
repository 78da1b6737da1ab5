"""Graph passes: every model keeps its meaning through `optimize` (the suite, built once per session with
$BURNEDGE_MODEL_CACHE reusing built files, and the exported fixtures in tests/exported, compared on the numpy
reference before and after), and BatchNormalization and LayerNorm fold as promised (small onnx.helper graphs pin each
pattern and the cases that must not fold). Epilogue and elementwise fusion: test_passes_fusion.py."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from burnedge.passes import DEFAULT_PIPELINE, optimize
from tests.models import suite
from tests.unit.passes_graphs import (
    EXPORTED,
    exported_graph,
    make,
    node,
    ops,
    origin_ops,
    random_feeds,
    same_meaning,
    suite_graph,
)


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = os.environ.get("BURNEDGE_MODEL_CACHE")
    return Path(env) if env else tmp_path_factory.mktemp("models")


# -- whole models -------------------------------------------------------------------------------------------------
def test_default_pipeline_order():
    assert DEFAULT_PIPELINE == (
        "fold_constants", "einsum", "dce", "fold_batchnorm", "fuse_layernorm", "fuse_epilogue", "fuse_elementwise",
        "dce",
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


# -- BatchNormalization ---------------------------------------------------------------------------------------
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
