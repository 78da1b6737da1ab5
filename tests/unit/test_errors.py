"""Malformed input gives a clear BurnedgeError naming the problem: never a crash, never a hang."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import burnedge
from burnedge.errors import InputError, ModelError, NotStaticError, UnsupportedOpError

from .helpers import mlp, save


def test_missing_file(tmp_path):
    with pytest.raises(ModelError, match="no such file"):
        burnedge.load(tmp_path / "absent.onnx")


def test_truncated_file(tmp_path):
    good = save(mlp(), tmp_path / "good.onnx").read_bytes()
    bad = tmp_path / "truncated.onnx"
    bad.write_bytes(good[: len(good) // 2])
    with pytest.raises(ModelError, match="truncated.onnx"):
        burnedge.load(bad)


@pytest.mark.parametrize("seed", range(5))
def test_random_bytes(tmp_path, seed):
    bad = tmp_path / "random.onnx"
    bad.write_bytes(np.random.default_rng(seed).bytes(4096))
    with pytest.raises(ModelError, match="random.onnx"):
        burnedge.load(bad)


def test_wrong_suffix(tmp_path):
    p = tmp_path / "model.tflite"
    p.write_bytes(b"x")
    with pytest.raises(ModelError, match="unknown model format"):
        burnedge.load(p)


def test_cycle(tmp_path):
    nodes = [
        helper.make_node("Add", ["x", "b"], ["a"], name="first"),
        helper.make_node("Relu", ["a"], ["b"], name="second"),
    ]
    g = helper.make_graph(
        nodes,
        "cyclic",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])],
    )
    p = save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "cyclic.onnx")
    with pytest.raises(ModelError, match="cycle.*'first'.*'second'|cycle.*'second'.*'first'"):
        burnedge.load(p)


def test_missing_initializer(tmp_path):
    m = mlp()
    del m.graph.initializer[0]  # "w"
    with pytest.raises(ModelError, match=r"'matmul' \(MatMul\) reads 'w'.*missing initializer"):
        burnedge.load(save(m, tmp_path / "m.onnx"))


def test_unsupported_ops_listed_once(tmp_path):
    nodes = [
        helper.make_node("FancyOp", ["x"], ["a"], name="f1", domain="com.example"),
        helper.make_node("FancyOp", ["a"], ["b"], name="f2", domain="com.example"),
        helper.make_node("OtherOp", ["b"], ["y"], name="o1", domain="com.example"),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    with pytest.raises(UnsupportedOpError) as info:
        burnedge.load(save(model, tmp_path / "m.onnx"))
    msg = str(info.value)
    assert "2 unsupported op(s)" in msg
    assert "com.example.FancyOp (opset 1; nodes 'f1', 'f2')" in msg and "OtherOp" in msg and "'o1'" in msg


def test_unknown_attribute_names_node(tmp_path):
    m = mlp()
    m.graph.node[2].attribute.append(helper.make_attribute("alpha", 0.1))
    with pytest.raises(ModelError, match=r"'relu' \(Relu\): unknown attribute\(s\) \['alpha'\]"):
        burnedge.load(save(m, tmp_path / "m.onnx"))


def test_dynamic_dims_need_input_shapes(tmp_path):
    p = save(mlp(batch="N"), tmp_path / "m.onnx")
    with pytest.raises(NotStaticError, match=r"x \['\?', 4\].*input_shapes"):
        burnedge.load(p)
    with pytest.raises(ModelError, match="contradicts"):
        burnedge.load(p, input_shapes={"x": (2, 5)})
    with pytest.raises(ModelError, match="no graph input named 'X'"):
        burnedge.load(p, input_shapes={"X": (2, 4)})
    assert burnedge.load(p, input_shapes={"x": (2, 4)}).inputs[0].shape == (2, 4)


@pytest.fixture
def session(tmp_path):
    return burnedge.Session(save(mlp(), tmp_path / "m.onnx"))


def test_wrong_feed_name(session):
    with pytest.raises(InputError, match=r"unknown input 'X'; the model's inputs are \['x'\]"):
        session.run({"X": np.zeros((1, 4), np.float32)})


def test_missing_feed(session):
    with pytest.raises(InputError, match=r"missing input 'x'"):
        session.run({})


def test_wrong_feed_shape(session):
    with pytest.raises(InputError, match=r"input 'x': expected shape \[1, 4\], got \[4\]"):
        session.run({"x": np.zeros(4, np.float32)})


def test_wrong_feed_dtype(session):
    with pytest.raises(InputError, match="input 'x': expected dtype float32, got float64"):
        session.run({"x": np.zeros((1, 4))})


def test_unknown_backend(tmp_path):
    with pytest.raises(burnedge.BurnedgeError, match="unknown backend 'tpu'; available: .*numpy"):
        burnedge.Session(save(mlp(), tmp_path / "m.onnx"), backend="tpu")


def test_what_no_static_plan_holds_is_said_so(tmp_path):
    """A sequence input, a string tensor on C: StaticPlanError saying why, not a missing op or a shape error."""
    seq = helper.make_tensor_sequence_value_info("xs", TensorProto.FLOAT, [2])
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [None])
    node = helper.make_node("ConcatFromSequence", ["xs"], ["y"], axis=0)
    model = helper.make_model(helper.make_graph([node], "g", [seq], [out]), opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(burnedge.StaticPlanError, match=r"graph input 'xs' is a sequence: a static plan holds only"):
        burnedge.load(save(model, tmp_path / "seq.onnx"))
    s = helper.make_tensor_value_info("s", TensorProto.STRING, [2])
    b = helper.make_tensor_value_info("b", TensorProto.BOOL, [2])
    eq = helper.make_node("Equal", ["s", "s"], ["b"], name="same")
    strings = helper.make_model(helper.make_graph([eq], "g", [s], [b]), opset_imports=[helper.make_opsetid("", 19)])
    m = burnedge.load(save(strings, tmp_path / "strings.onnx"))
    np.testing.assert_array_equal(
        burnedge.Session(m, backend="numpy").run({"s": np.array(["a", "b"], object)})["b"], [1, 1]
    )
    with pytest.raises(burnedge.StaticPlanError, match=r"tensor 's' of node 'same' \(Equal\) holds strings"):
        burnedge.Session(m, backend="c")
