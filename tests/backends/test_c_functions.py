"""Ops the C backend has no kernel for but whose ONNX schema defines a function body run on C as that body:
MeanVarianceNormalization (a fixed body) against onnxruntime, FlexAttention (a context-dependent body, with a
score_mod subgraph) against the numpy reference, which keeps the op; the expansion counts against max_nodes."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import burnedge
from burnedge import limits

from .c_helpers import check_node, run_c


def test_mean_variance_normalization_runs_its_function_body():
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 5)).astype(np.float32)
    node = helper.make_node("MeanVarianceNormalization", ["x"], ["y"], axes=[0, 2])
    check_node(node, {"x": x}, opset=22, tol=1e-4)


def _flex_model():
    """FlexAttention (scaled) with a score_mod subgraph that adds a constant to every score."""
    bias = helper.make_tensor("bias", TensorProto.FLOAT, [], [0.25])
    score_mod = helper.make_graph(
        [helper.make_node("Add", ["s", "bias"], ["t"])],
        "score_mod",
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 2, 3, 4])],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1, 2, 3, 4])],
        [bias],
    )
    node = helper.make_node(
        "FlexAttention", ["q", "k", "v"], ["y"], domain="ai.onnx.preview", scale=0.5, score_mod=score_mod
    )
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in
           [("q", [1, 2, 3, 8]), ("k", [1, 2, 4, 8]), ("v", [1, 2, 4, 6])]]  # fmt: skip
    graph = helper.make_graph([node], "flex", ins, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    opsets = [helper.make_opsetid("", 26), helper.make_opsetid("ai.onnx.preview", 1)]
    return helper.make_model(graph, opset_imports=opsets)


def test_flex_attention_with_a_score_mod_matches_the_reference():
    rng = np.random.default_rng(2)
    feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in
             [("q", (1, 2, 3, 8)), ("k", (1, 2, 4, 8)), ("v", (1, 2, 4, 6))]}  # fmt: skip
    model = burnedge.load(_flex_model())
    assert [n.op_type for n in model.graph.nodes] == ["FlexAttention"]  # the reference keeps the op
    want = burnedge.Session(model, backend="numpy").run(feeds)["y"]
    got = run_c(_flex_model(), feeds)
    assert got.shape == want.shape == (1, 2, 3, 6)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("limit", [3, 12])  # 3: one body's import is over it; 12: the two bodies together
def test_the_expansion_counts_against_max_nodes(limit):
    nodes = [helper.make_node("MeanVarianceNormalization", [a], [b]) for a, b in [("x", "h"), ("h", "y")]]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 2, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 2, 2])
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 18)])
    with limits.raised(max_nodes=limit), pytest.raises(limits.LimitError, match="MeanVarianceNormalization.*max_nodes"):
        burnedge.Session(burnedge.load(model), backend="c")
    with limits.raised(max_nodes=30):
        assert burnedge.Session(burnedge.load(model), backend="c").run({"x": np.ones((1, 3, 2, 2), np.float32)})
