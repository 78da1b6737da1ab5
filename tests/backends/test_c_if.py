"""A data-dependent If on the C backend: both branches planned in the one arena (over the If step's scratch, the
two sharing its bytes), the branch chosen at run time; checked against onnxruntime on both outcomes, with a nested
If, constants inside branches, tensors read from the enclosing graph, and a bundle that runs it."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge import compiler
from burnedge.backends.c import BACKEND
from burnedge.backends.c.emit import emit
from burnedge.ir import Node
from burnedge.ops import for_onnx
from burnedge.plan.branches import plan_if

F = TensorProto.FLOAT


def _graph(nodes, outputs, inits=(), name="b"):
    return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(o, F, None) for o in outputs], inits)


def _model(nested: bool = False, then_rows: int = 2):
    """cond = ReduceSum(x) > 0; then: Relu(2x) + a constant (`then_rows` rows: 2 matches the else branch);
    else: tanh((x - b) @ W), or with `nested` an inner If on max((x - b) @ W) > 0 picking Neg or Sigmoid. z = y + x."""
    two = numpy_helper.from_array(np.array(2.0, np.float32), "two")
    w_then = numpy_helper.from_array(np.arange(4 * then_rows, dtype=np.float32).reshape(then_rows, 4), "w_then")
    then = _graph(
        [
            helper.make_node("Mul", ["x", "two"], ["t0"]),
            helper.make_node("Relu", ["t0"], ["t1"]),
            helper.make_node("Add", ["t1", "w_then"], ["t_out"]),
        ],
        ["t_out"],
        [two, w_then],
        "then",
    )
    else_nodes = [helper.make_node("Sub", ["x", "b"], ["e0"]), helper.make_node("MatMul", ["e0", "W"], ["e1"])]
    inits = []
    if nested:
        inits = [numpy_helper.from_array(np.array(0.0, np.float32), "zero_in")]
        inner_then = _graph([helper.make_node("Neg", ["e1"], ["n_out"])], ["n_out"], name="inner_then")
        inner_else = _graph([helper.make_node("Sigmoid", ["e1"], ["s_out"])], ["s_out"], name="inner_else")
        else_nodes += [
            helper.make_node("ReduceMax", ["e1"], ["m"], keepdims=0),
            helper.make_node("Greater", ["m", "zero_in"], ["c2"]),
            helper.make_node("If", ["c2"], ["e_out"], then_branch=inner_then, else_branch=inner_else),
        ]
    else:
        else_nodes.append(helper.make_node("Tanh", ["e1"], ["e_out"]))
    other = _graph(else_nodes, ["e_out"], inits, "else")
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["c"]),
        helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
        helper.make_node("Add", ["y", "x"], ["z"]),
    ]
    w = (np.arange(16, dtype=np.float32).reshape(4, 4) - 8) / 10
    g = helper.make_graph(
        nodes,
        "if_model",
        [helper.make_tensor_value_info("x", F, [2, 4])],
        [helper.make_tensor_value_info("z", F, [2, 4])],
        [
            numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
            numpy_helper.from_array(np.full((2, 4), 0.5, np.float32), "b"),
            numpy_helper.from_array(w, "W"),
        ],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


# inputs that take each way: the outer condition (sum > 0), and in the else branch the inner one (max > 0)
X_THEN = np.array([[1.0, 2.0, -0.5, 0.3], [0.1, -0.2, 0.4, 0.9]], np.float32)
X_ELSE_POS = np.array([[-1.0, -2.0, 0.5, -0.3], [-0.1, 0.2, -0.4, -0.9]], np.float32)
X_ELSE_NEG = np.array([[1.0, 1.0, -2.0, -2.0], [0.5, 0.8, -1.5, -1.2]], np.float32)


def _inner_max(x: np.ndarray) -> float:
    w = (np.arange(16, dtype=np.float32).reshape(4, 4) - 8) / 10
    return float(((x - 0.5) @ w).max())


@pytest.mark.parametrize("nested", [False, True], ids=["flat", "nested"])
def test_if_runs_the_branch_the_data_selects(nested):
    assert X_THEN.sum() > 0 > X_ELSE_POS.sum() and X_ELSE_NEG.sum() < 0
    assert _inner_max(X_ELSE_POS) > 0 > _inner_max(X_ELSE_NEG)  # both inner outcomes are taken
    m = _model(nested)
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    c = burnedge.Session(burnedge.load(m), backend="c")
    outs = []
    for x in (X_THEN, X_ELSE_POS, X_ELSE_NEG, X_THEN):  # back to the first branch: nothing stale is left
        want = ref.run(None, {"x": x})[0]
        got = c.run({"x": x})["z"]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        outs.append(got)
    assert not np.allclose(outs[1], outs[2])  # the two else paths differ (nested: Neg vs Sigmoid)


def test_both_branches_share_the_if_steps_scratch():
    model = burnedge.load(_model(nested=True))
    plan = compiler.plan(model, BACKEND)
    step = next(i for i, n in enumerate(plan.steps) if n.op_type == "If")
    branches = plan_if(plan.graph, plan.steps[step], BACKEND.scratch)
    then_bytes, else_bytes = branches.then.arena_bytes, branches.other.arena_bytes
    assert then_bytes > 0 and else_bytes > 0
    assert plan.scratch[step][1] == max(then_bytes, else_bytes) < then_bytes + else_bytes  # overlapped
    assert plan.arena_bytes <= plan.lower_bound_bytes + 64 * len(plan.buffers)
    src = emit(plan).source
    body = src[src.index(f"case {step}:") : src.index(f"case {step + 1}:")]
    assert body.count("if (") == 2 and "} else {" in body  # the If and its nested If, in the one step
    base = plan.scratch[step][0]
    for p in (branches.then, branches.other):  # each branch's own tensors lie inside the If's scratch
        for name, off in p.offsets.items():
            assert off + p.graph.values[name].nbytes <= p.arena_bytes, name
    assert f"arena + {base}" in body


def test_a_bundle_with_an_if_runs_both_ways(tmp_path):
    m = _model(nested=True)
    path = tmp_path / "if.bedge"
    burnedge.export(burnedge.load(m), path, test_vectors=1)
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    s = burnedge.Session(path)
    for x in (X_THEN, X_ELSE_POS, X_ELSE_NEG):
        np.testing.assert_allclose(s.run({"x": x})["z"], ref.run(None, {"x": x})[0], rtol=1e-6, atol=1e-6)


def test_branches_of_different_shapes_are_refused_by_name():
    """The importer refuses an If whose branches disagree on shapes; the planner checks again (a graph built or
    rewritten after import)."""
    bad = _model()
    then = next(a.g for a in bad.graph.node[2].attribute if a.name == "then_branch")
    del then.node[2]
    then.node.append(helper.make_node("ReduceSum", ["t1"], ["t_out"], keepdims=1))  # [1, 1]; the If's y is [2, 4]
    with pytest.raises(burnedge.BurnedgeError, match=r"'If_2' \(If\).*different output shapes"):
        burnedge.load(bad)
    model = burnedge.load(_model())
    node = next(n for n in model.graph.nodes if n.op_type == "If")
    branch = node.attrs["then_branch"]
    branch.nodes[-1] = Node(for_onnx("ReduceSum", 13), "sum", ["t1"], ["t_out"], {"keepdims": 1})
    with pytest.raises(burnedge.BurnedgeError, match=r"'If_2' \(If\): output 0 of its then_branch is float32\[1, 1\]"):
        burnedge.Session(model, backend="c")


def test_a_loop_stays_on_numpy_with_its_reason():
    """A Loop that stops on a condition its body computes is not unrolled at import: the C backend says why."""
    body = helper.make_graph(
        [helper.make_node("Add", ["v_in", "v_in"], ["v_out"]),
         helper.make_node("ReduceSum", ["v_out"], ["total"], keepdims=0),
         helper.make_node("Less", ["total", "limit"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", F, [3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", F, [3])],
        [numpy_helper.from_array(np.array(50.0, np.float32), "limit")],
    )  # fmt: skip
    g = helper.make_graph(
        [helper.make_node("Loop", ["trips", "", "v0"], ["v"], body=body)],
        "loop",
        [helper.make_tensor_value_info("v0", F, [3])],
        [helper.make_tensor_value_info("v", F, [3])],
        [numpy_helper.from_array(np.array(5, np.int64), "trips")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model = burnedge.load(m)
    node = next(n for n in model.graph.nodes if n.op_type == "Loop")
    assert "no C kernel for Loop" in BACKEND.supports(node, model.graph)
    with pytest.raises(burnedge.UnsupportedOpError, match="Loop"):
        burnedge.Session(model, backend="c")
    v0 = np.array([1.0, 2.0, 3.0], np.float32)
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"v0": v0})[0]
    np.testing.assert_array_equal(burnedge.Session(model).run({"v0": v0})["v"], want)  # numpy runs it


def test_branch_constants_of_one_name_and_pass_through_outputs():
    """Both branches name a constant 'k' (3 and -1); a branch may output a view of an enclosing tensor (a copy:
    the view cannot share bytes it does not own) or a constant of its own."""
    k3 = numpy_helper.from_array(np.full((2, 4), 3.0, np.float32), "k")
    k_1 = numpy_helper.from_array(np.full((2, 4), -1.0, np.float32), "k")
    c0 = numpy_helper.from_array(np.arange(8, dtype=np.float32).reshape(2, 4), "c0")
    if1 = helper.make_node(
        "If",
        ["c"],
        ["y1"],
        then_branch=_graph([helper.make_node("Mul", ["x", "k"], ["m"])], ["m"], [k3], "then1"),
        else_branch=_graph([helper.make_node("Add", ["x", "k"], ["a"])], ["a"], [k_1], "else1"),
    )
    if2 = helper.make_node(
        "If",
        ["c"],
        ["y2"],
        then_branch=_graph([helper.make_node("Identity", ["x"], ["xo"])], ["xo"], name="then2"),
        else_branch=_graph([], ["c0"], [c0], "else2"),
    )
    g = helper.make_graph(
        [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0), helper.make_node("Greater", ["s", "zero"], ["c"]),
         if1, if2, helper.make_node("Sub", ["y1", "y2"], ["z"])],
        "consts",
        [helper.make_tensor_value_info("x", F, [2, 4])],
        [helper.make_tensor_value_info("z", F, [2, 4])],
        [numpy_helper.from_array(np.array(0.0, np.float32), "zero")],
    )  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    c = burnedge.Session(burnedge.load(m), backend="c")
    for x in (X_THEN, X_ELSE_POS):
        np.testing.assert_allclose(c.run({"x": x})["z"], ref.run(None, {"x": x})[0], rtol=1e-6, atol=1e-6)


def test_convs_inside_branches_with_their_scratch_and_threads():
    """Branches of convs (kernel scratch, a conv -> conv chain the C backend may keep channels-last) and pools."""
    rng = np.random.default_rng(0)

    def w(name, *shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)

    then = _graph(
        [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1] * 4), helper.make_node("Relu", ["a"], ["b"]),
         helper.make_node("Conv", ["b", "w2"], ["c"], pads=[1] * 4),
         helper.make_node("GlobalAveragePool", ["c"], ["t_out"])],
        ["t_out"], [w("w1", 8, 3, 3, 3), w("w2", 8, 8, 3, 3)], "then",
    )  # fmt: skip
    other = _graph(
        [helper.make_node("Conv", ["x", "w3"], ["d"], pads=[2] * 4, strides=[2, 2]),
         helper.make_node("GlobalMaxPool", ["d"], ["e_out"])],
        ["e_out"], [w("w3", 8, 3, 5, 5)], "else",
    )  # fmt: skip
    g = helper.make_graph(
        [helper.make_node("ReduceMean", ["x"], ["s"], keepdims=0), helper.make_node("Greater", ["s", "zero"], ["go"]),
         helper.make_node("If", ["go"], ["y"], then_branch=then, else_branch=other)],
        "if_conv",
        [helper.make_tensor_value_info("x", F, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", F, [1, 8, 1, 1])],
        [numpy_helper.from_array(np.array(0.0, np.float32), "zero")],
    )  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    model = burnedge.load(m)
    for threads in (1, 2):
        c = burnedge.Session(model, backend="c", threads=threads)
        for sign in (1, -1):
            x = (rng.standard_normal((1, 3, 16, 16)) + sign).astype(np.float32)
            want = ref.run(None, {"x": x})[0]
            np.testing.assert_allclose(c.run({"x": x})["y"], want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))
