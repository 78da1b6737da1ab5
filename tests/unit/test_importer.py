"""Importer features: Constant-node weights, external data, local functions, bind, If/Loop folding, opsets."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge

from .helpers import mlp, mlp_reference, save

X = np.array([[1.0, -2.0, 3.0, 0.5]], np.float32)


def run(path, feeds, **kw):
    return burnedge.Session(burnedge.load(path, **kw)).run(feeds)


def test_weights_as_constant_nodes(tmp_path):
    m = mlp()
    consts = [helper.make_node("Constant", [], [i.name], value=i, name=f"const_{i.name}") for i in m.graph.initializer]
    nodes = consts + list(m.graph.node)
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    del m.graph.initializer[:]
    out = run(save(m, tmp_path / "m.onnx"), {"x": X})
    np.testing.assert_allclose(out["y"], mlp_reference(X, mlp()), rtol=1e-6)
    assert [n.op_type for n in burnedge.load(tmp_path / "m.onnx").graph.nodes] == ["MatMul", "Add", "Relu"]


def test_external_data(tmp_path):
    m = mlp()
    onnx.save(
        m,
        str(tmp_path / "m.onnx"),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="m.weights",
        size_threshold=0,
    )
    assert (tmp_path / "m.weights").exists()
    np.testing.assert_allclose(run(tmp_path / "m.onnx", {"x": X})["y"], mlp_reference(X, mlp()), rtol=1e-6)
    (tmp_path / "m.weights").unlink()
    with pytest.raises(burnedge.ModelError, match="external data"):
        burnedge.load(tmp_path / "m.onnx")


def test_local_function_inlined(tmp_path):
    fn = helper.make_function(
        "local",
        "AddRelu",
        ["a", "b"],
        ["c"],
        [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["c"])],
        [helper.make_opsetid("", 17)],
    )
    g = helper.make_graph(
        [helper.make_node("AddRelu", ["x", "x"], ["y"], domain="local")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    )
    m = helper.make_model(
        g, functions=[fn], opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]
    )
    np.testing.assert_allclose(run(save(m, tmp_path / "f.onnx"), {"x": X})["y"], np.maximum(2 * X, 0))


def _shape_model() -> onnx.ModelProto:
    """y = Reshape(x, Concat(Shape(x)[0:1], [-1])): the shape subgraph folds to a constant."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "zero1"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array([0], np.int64), "zero1"),
        numpy_helper.from_array(np.array([-1], np.int64), "minus1"),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_shape_subgraph_folds(tmp_path):
    model = burnedge.load(save(_shape_model(), tmp_path / "s.onnx"), input_shapes={"x": (4, 2, 3)})
    assert [n.op_type for n in model.graph.nodes] == ["Reshape"]
    x = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    np.testing.assert_array_equal(burnedge.Session(model).run({"x": x})["y"], x.reshape(4, 6))


def _if_model() -> onnx.ModelProto:
    then_g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1, 4])],
    )
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"])],
        "else",
        [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1, 4])],
    )
    g = helper.make_graph(
        [helper.make_node("If", ["flag"], ["y"], then_branch=then_g, else_branch=else_g)],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]),
            helper.make_tensor_value_info("flag", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("flag", [True, False])
def test_if_on_bound_condition_is_inlined(tmp_path, flag):
    model = burnedge.load(save(_if_model(), tmp_path / "if.onnx"), bind={"flag": np.array(flag)})
    assert "If" not in [n.op_type for n in model.graph.nodes]
    assert [i.name for i in model.inputs] == ["x"]
    y = burnedge.Session(model).run({"x": X})["y"]
    np.testing.assert_array_equal(y, np.maximum(X, 0) if flag else -X)


def test_loop_with_constant_trip_count_is_unrolled(tmp_path):
    # for i in range(3): acc = acc + x ; also stacks acc at each step
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "x"], ["acc_out"]), helper.make_node("Identity", ["acc_out"], ["scan"])],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [1, 4]),
        ],
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [1, 4]),
            helper.make_tensor_value_info("scan", TensorProto.FLOAT, [1, 4]),
        ],
    )
    g = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x"], ["acc", "stack"], body=body)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [
            helper.make_tensor_value_info("acc", TensorProto.FLOAT, [1, 4]),
            helper.make_tensor_value_info("stack", TensorProto.FLOAT, [3, 1, 4]),
        ],
        [numpy_helper.from_array(np.array(3, np.int64), "M")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model = burnedge.load(save(m, tmp_path / "loop.onnx"))
    assert "Loop" not in [n.op_type for n in model.graph.nodes]
    out = burnedge.Session(model).run({"x": X})
    np.testing.assert_allclose(out["acc"], 4 * X)
    np.testing.assert_allclose(out["stack"], np.stack([2 * X, 3 * X, 4 * X]))


@pytest.mark.parametrize("opset", [9, 13, 21])
def test_opsets(tmp_path, opset):
    m = mlp(opset=opset)
    np.testing.assert_allclose(run(save(m, tmp_path / "m.onnx"), {"x": X})["y"], mlp_reference(X, m), rtol=1e-6)


def test_arena_is_real(tmp_path):
    """Intermediate tensors share the arena: the chain MatMul -> Add -> Relu needs two slots, not three."""
    sess = burnedge.Session(save(mlp(), tmp_path / "m.onnx"))
    assert sess.arena_bytes == 2 * 64
