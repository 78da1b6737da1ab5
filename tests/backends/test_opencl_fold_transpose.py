"""Transposes around a MatMul folded into its indexing (passes/fold_transpose.py): the pass leaves the numpy
reference's answer unchanged (checked against onnxruntime on the original graph), and the OpenCL backend runs the
folded MatMul with no Transpose kernel and onnxruntime's answer within 1e-4.

Cases: attention's head split and merge (perm [0, 2, 1, 3] in, [0, 2, 3, 1] for K, out through [0, 2, 1, 3]), a
chain of two Transposes (composed), a 2-D operand transposed, a batch operand broadcast against a transposed
one, an output Transpose followed by a residual Add (folded: the residual stays after the store), a rotating
output permutation (not its own inverse), and a Transpose with a second reader (not folded)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import burnedge
from burnedge.backends import lookup
from burnedge.ops.interpreter import interpret
from burnedge.passes import fold_transpose, optimize

ort = pytest.importorskip("onnxruntime")


def _onnx(nodes, inputs, outputs=("y",)):
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


T = helper.make_node
CASES = {
    "attention": (
        [
            T("Transpose", ["q"], ["qt"], perm=[0, 2, 1, 3]),
            T("Transpose", ["k"], ["kt"], perm=[0, 2, 3, 1]),
            T("MatMul", ["qt", "kt"], ["s"]),
            T("Softmax", ["s"], ["p"], axis=-1),
            T("Transpose", ["v"], ["vt"], perm=[0, 2, 1, 3]),
            T("MatMul", ["p", "vt"], ["c"]),
            T("Transpose", ["c"], ["y"], perm=[0, 2, 1, 3]),
        ],
        {"q": (2, 5, 3, 4), "k": (2, 7, 3, 4), "v": (2, 7, 3, 6)},
        0,
    ),
    "chain": (
        [
            T("Transpose", ["a"], ["a1"], perm=[1, 0, 2]),
            T("Transpose", ["a1"], ["a2"], perm=[0, 2, 1]),
            T("MatMul", ["a2", "b"], ["y"]),
        ],
        {"a": (5, 3, 9), "b": (3, 5, 4)},
        0,
    ),
    "matrix": ([T("Transpose", ["a"], ["at"]), T("MatMul", ["at", "b"], ["y"])], {"a": (7, 5), "b": (7, 3)}, 0),
    "broadcast": (
        [T("Transpose", ["b"], ["bt"], perm=[0, 2, 1]), T("MatMul", ["a", "bt"], ["y"])],
        {"a": (4, 1, 3, 6), "b": (2, 5, 6)},
        0,
    ),
    "store_then_residual": (
        [T("MatMul", ["a", "b"], ["c"]), T("Transpose", ["c"], ["ct"], perm=[1, 0, 2]), T("Add", ["ct", "r"], ["y"])],
        {"a": (3, 4, 5), "b": (3, 5, 6), "r": (4, 3, 6)},
        0,
    ),
    "store_rotated": (
        [T("MatMul", ["a", "b"], ["c"]), T("Transpose", ["c"], ["y"], perm=[1, 2, 0])],
        {"a": (3, 4, 5), "b": (5, 6)},
        0,
    ),
    "second_reader": (
        [
            T("Transpose", ["a"], ["at"]),
            T("MatMul", ["at", "b"], ["m"]),
            T("MatMul", ["at", "e"], ["at2"]),
            T("Add", ["m", "at2"], ["y"]),
        ],
        {"a": (6, 6), "b": (6, 6), "e": (6, 6)},
        1,
    ),
}


def _case(name):
    nodes, inputs, transposes_left = CASES[name]
    proto = _onnx(nodes, inputs)
    rng = np.random.default_rng(len(name))
    feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in inputs.items()}
    want = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    return burnedge.load(proto), feeds, want, transposes_left


def _transposes(graph) -> int:
    return sum(n.op_type == "Transpose" for n in graph.nodes)


@pytest.mark.parametrize("name", sorted(CASES))
def test_folded_graph_gives_onnxruntimes_answer_on_the_reference(name):
    model, feeds, want, left = _case(name)
    graph = optimize(model.graph.copy(), ("fold_transpose", "dce"))
    assert _transposes(graph) == left, [n.op_type for n in graph.nodes]
    folded = any(any(k in n.attrs for k in ("perm_a", "perm_b", "perm_y")) for n in graph.nodes)
    assert folded == (name != "second_reader")
    got = interpret(graph, feeds)["y"]  # shapes and dtypes checked against the graph's values as it runs
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_pass_leaves_graphs_without_transposes_alone():
    proto = _onnx([T("MatMul", ["a", "b"], ["y"])], {"a": (3, 4), "b": (4, 2)})
    graph = fold_transpose.run(burnedge.load(proto).graph)
    assert [n.op_type for n in graph.nodes] == ["MatMul"] and not graph.nodes[0].attrs


opencl = lookup("opencl")


@pytest.mark.skipif(bool(opencl.unavailable_reason()), reason="no OpenCL device (PoCL in CI)")
@pytest.mark.parametrize("name", sorted(CASES))
def test_opencl_runs_the_folded_matmul_without_transpose_kernels(name):
    model, feeds, want, left = _case(name)
    session = burnedge.Session(model, backend="opencl")
    plan = session.executable.plan
    assert _transposes(plan.graph) == left
    got = next(iter(session.run(feeds).values()))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.max(np.abs(want))))
