"""`inspect` on a model whose shapes are not static shows what the file says, and an If whose condition comes from an
input is planned only when both branches agree on the shapes (issue 10, item 4: Silero VAD without --bind)."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge.cli import main

from .helpers import save


def dynamic_conv() -> onnx.ModelProto:
    """A Conv over x[batch, 3, height, width]: every open dim has a name, as exporters write them."""
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    g = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["y"], ["z"]),
        ],
        "dyn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "height", "width"])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", 4, "height", "width"])],
        [w],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_inspect_shows_a_dynamic_model(tmp_path, capsys):
    path = save(dynamic_conv(), tmp_path / "dyn.onnx")
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "[batch, 3, height, width]" in out
    assert "--input-shape x=<batch>,3,<height>,<width>" in out
    assert "parameters 108 " in out  # 4*3*3*3 weights, read from the stored dims
    assert any(line.split()[:2] == ["Conv", "1"] for line in out.splitlines())
    assert main(["inspect", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["dynamic"] == {"x": [0, 2, 3]} and info["ops"] == {"Conv": 1, "Relu": 1}
    # the open dims given: the full picture, MACs included
    assert main(["inspect", str(path), "--input-shape", "x=1,3,8,8"]) == 0
    assert "MACs 6.912K" in capsys.readouterr().out  # 1*4*8*8 outputs * 27


def rate_model(else_shape: tuple[int, ...]) -> onnx.ModelProto:
    """y = x * 2 when sr == 16000, else x reshaped to `else_shape` * 3 (Silero VAD picks its 16k or 8k net by sr)."""

    def branch(name: str, k: float, shape: tuple[int, ...] | None) -> onnx.GraphProto:
        consts = [numpy_helper.from_array(np.array(k, np.float32), f"k_{name}")]
        nodes, src = [], "x"
        if shape is not None:
            consts.append(numpy_helper.from_array(np.array(shape, np.int64), f"s_{name}"))
            nodes.append(helper.make_node("Reshape", ["x", f"s_{name}"], [f"r_{name}"]))
            src = f"r_{name}"
        nodes.append(helper.make_node("Mul", [src, f"k_{name}"], [f"y_{name}"]))
        out = helper.make_tensor_value_info(f"y_{name}", TensorProto.FLOAT, None)
        return helper.make_graph(nodes, name, [], [out], consts)

    g = helper.make_graph(
        [
            helper.make_node("Equal", ["sr", "rate"], ["is16k"], name="equal"),
            helper.make_node(
                "If",
                ["is16k"],
                ["y"],
                name="pick",
                then_branch=branch("then", 2, None),
                else_branch=branch("else", 3, else_shape),
            ),
        ],
        "rate",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 12]),
            helper.make_tensor_value_info("sr", TensorProto.INT64, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(16000, np.int64), "rate")],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_if_whose_branch_cannot_run_asks_for_bind(tmp_path, capsys):
    path = save(rate_model((5, -1)), tmp_path / "rate.onnx")  # 12 values cannot be 5 rows
    with pytest.raises(
        burnedge.NotStaticError, match=r"node 'pick' \(If\).*input\(s\) \['sr'\].*else branch.*bind"
    ) as e:
        burnedge.load(path)
    assert e.value.inputs == ("sr",)
    assert main(["inspect", str(path)]) == 0  # shows the file, and why it is not static
    assert "not static node 'pick' (If)" in capsys.readouterr().out
    assert main(["export", str(path), "-o", str(tmp_path / "r.bedge")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--bind" in err and not (tmp_path / "r.bedge").exists()
    m = burnedge.load(path, bind={"sr": np.array(16000)})  # bound: the then branch is inlined
    np.testing.assert_array_equal(
        burnedge.Session(m).run({"x": np.ones((1, 12), np.float32)})["y"], np.full((1, 12), 2.0)
    )


def test_if_whose_branches_disagree_on_shapes_asks_for_bind(tmp_path):
    path = save(rate_model((3, 4)), tmp_path / "rate.onnx")
    with pytest.raises(burnedge.NotStaticError, match=r"different output shapes .*y: \[1, 12\] vs \[3, 4\].*\['sr'\]"):
        burnedge.load(path)


def test_if_whose_branches_agree_runs_either_way(tmp_path):
    path = save(rate_model((1, 12)), tmp_path / "rate.onnx")
    sess = burnedge.Session(burnedge.load(path), backend="numpy")
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    x = np.arange(12, dtype=np.float32).reshape(1, 12)
    for sr in (16000, 8000):  # the branch is chosen at run time, and its result matches onnxruntime's
        feeds = {"x": x, "sr": np.array(sr, np.int64)}
        np.testing.assert_array_equal(sess.run(feeds)["y"], ref.run(None, feeds)[0])
