"""The einsum pass (burnedge/passes/einsum.py): Einsum becomes Transpose / Reshape / MatMul / ReduceSum / Mul, so
the C backend runs it; checked against onnxruntime on the node tests' equations, DeepFilterNet3's grouped linear
layer and more (batch broadcasting, diagonals, implicit outputs, three operands)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge.passes import einsum, optimize

RNG = np.random.default_rng(3)

CASES = [
    ("btgi,gih->btgh", [(1, 10, 8, 16), (8, 16, 32)]),  # DeepFilterNet3's GroupedLinear
    ("bij, bjk -> bik", [(5, 2, 3), (5, 3, 4)]),
    ("i,i", [(5,), (5,)]),
    ("->", [()]),
    ("ij->i", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("...ii ->...i", [(3, 5, 5)]),
    ("ii", [(4, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (1, 5, 4, 2)]),
    ("...ij,jk->...ik", [(2, 1, 3, 4), (4, 2)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 5, 8), (1, 2, 6, 8)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ijk->", [(2, 3, 4)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ij,kj->ik", [(1, 4), (3, 4)]),
]


def _model(eq: str, shapes: list[tuple[int, ...]], opset: int = 13):
    names = [f"x{k}" for k in range(len(shapes))]
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in zip(names, shapes)]
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([helper.make_node("Einsum", names, ["y"], equation=eq)], "einsum", ins, [out])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    feeds = {n: RNG.standard_normal(s).astype(np.float32) for n, s in zip(names, shapes)}
    return m, feeds


def _rel(got: np.ndarray, want: np.ndarray) -> float:
    assert got.shape == want.shape, (got.shape, want.shape)
    return float(np.abs(got.astype(np.float64) - want).max() / max(float(np.abs(want).max()), 1e-30))


@pytest.mark.parametrize("opset", [12, 13])
@pytest.mark.parametrize(("eq", "shapes"), CASES, ids=[c[0] for c in CASES])
def test_einsum_on_c_matches_onnxruntime(eq, shapes, opset):
    m, feeds = _model(eq, shapes, opset)
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    model = burnedge.load(m)
    rewritten = optimize(model.graph.copy(), ("einsum",))
    assert "Einsum" not in [n.op_type for n in rewritten.nodes]
    got = burnedge.Session(model, backend="c").run(feeds)["y"]
    assert _rel(got, want) < 1e-5


def test_a_broadcast_contracted_axis_stays_einsum_with_its_reason():
    m, _ = _model("ij,jk->ik", [(2, 1), (3, 4)])
    graph = burnedge.load(m).graph
    node = graph.nodes[0]
    assert "letter 'j' has sizes [1, 3]" in einsum.why_not(graph, node)
    assert [n.op_type for n in optimize(graph.copy(), ("einsum",)).nodes] == ["Einsum"]
    with pytest.raises(burnedge.BurnedgeError, match="Einsum"):
        burnedge.Session(burnedge.load(m), backend="c")


def test_a_constant_operand_is_laid_out_once():
    """'btgi,ghi->btgh' with constant weights: their transpose is done by the pass, not at every run."""
    w = RNG.standard_normal((4, 6, 5)).astype(np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 5])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    node = helper.make_node("Einsum", ["x", "w"], ["y"], equation="btgi,ghi->btgh")
    g = helper.make_graph([node], "grouped", [x], [y], [numpy_helper.from_array(w, "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model = burnedge.load(m)
    rewritten = optimize(model.graph.copy(), ("einsum", "dce"))
    ops = [n.op_type for n in rewritten.nodes]
    matmul = rewritten.nodes[ops.index("MatMul")]
    transposes = [n for n in rewritten.nodes if n.op_type == "Transpose"]  # x's and the output's
    assert transposes and not any(rewritten.values[n.inputs[0]].is_const for n in transposes)  # w's is done
    assert rewritten.values[matmul.inputs[1]].is_const
    feeds = {"x": RNG.standard_normal((1, 3, 4, 5)).astype(np.float32)}
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    assert _rel(burnedge.Session(model, backend="c").run(feeds)["y"], want) < 1e-5
