"""C backend vs onnxruntime on Scan (opset 16): two states, scan inputs along axis 0 and 1 and reversed, scan
outputs along another axis and reversed, a body that reads an outer tensor and a constant, odd lengths, 2 threads."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge

RNG = np.random.default_rng(37)
F = TensorProto.FLOAT


def _body(outer: str):
    """(s, m, a, b) -> (s + a * b + outer, max(m, a), a * s): s and m are states, a and b slices, outer read."""
    vi = helper.make_tensor_value_info
    nodes = [
        helper.make_node("Mul", ["a", "b"], ["ab"]),
        helper.make_node("Add", ["s", "ab"], ["s1"]),
        helper.make_node("Add", ["s1", outer], ["s_out"]),
        helper.make_node("Max", ["m", "a"], ["m_out"]),
        helper.make_node("Mul", ["a", "s"], ["y"]),
        helper.make_node("Tanh", ["y"], ["z"]),
    ]
    ins = [vi("s", F, [3, 4]), vi("m", F, [3, 4]), vi("a", F, [3, 4]), vi("b", F, [3, 4])]
    outs = [vi("s_out", F, [3, 4]), vi("m_out", F, [3, 4]), vi("z", F, [3, 4])]
    return helper.make_graph(nodes, "body", ins, outs)


@pytest.mark.parametrize("in_axes,in_dirs,out_axis,out_dir", [
    ([0, 0], [0, 0], 0, 0), ([0, 1], [1, 0], 1, 0), ([2, 1], [0, 1], 2, 1)])  # fmt: skip
def test_scan(in_axes, in_dirs, out_axis, out_dir):
    steps = 5
    shape_a = [3, 4]
    shape_a.insert(in_axes[0], steps)
    shape_b = [3, 4]
    shape_b.insert(in_axes[1], steps)
    feeds = {"s0": RNG.standard_normal((3, 4)).astype(np.float32), "a": RNG.standard_normal(shape_a).astype(np.float32),
             "outer": RNG.standard_normal((3, 4)).astype(np.float32)}  # fmt: skip
    b = numpy_helper.from_array(RNG.standard_normal(shape_b).astype(np.float32), "b")  # a constant scan input
    m0 = numpy_helper.from_array(np.full((3, 4), -1.0, np.float32), "m0")  # a constant initial state
    node = helper.make_node(
        "Scan", ["s0", "m0", "a", "b"], ["s", "m", "ys"], body=_body("outer"), num_scan_inputs=2,
        scan_input_axes=in_axes, scan_input_directions=in_dirs, scan_output_axes=[out_axis],
        scan_output_directions=[out_dir],
    )  # fmt: skip
    ins = [helper.make_tensor_value_info(k, F, v.shape) for k, v in feeds.items()]
    outs = [helper.make_tensor_value_info(k, F, None) for k in ("s", "m", "ys")]
    graph = helper.make_graph([node], "g", ins, outs, initializer=[b, m0])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    want = dict(zip(["s", "m", "ys"], sess.run(None, feeds)))
    got = burnedge.Session(burnedge.load(proto), backend="c", threads=2).run(feeds)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("directions", [[0, 0], [1, 0]])
def test_scan_opset8_runtime_sequence_lens(directions):
    """Opset-8 Scan: a batch of 3 with ragged sequence_lens fed at run time, the body of test_scan without its outer
    read, one scan input reversed; the scan outputs past a sequence's end are zero."""
    steps, vi = 5, helper.make_tensor_value_info
    feeds = {"lens": np.array([2, 5, 1], np.int64)}
    for name in ("s0", "m0"):
        feeds[name] = RNG.standard_normal((3, 3, 4)).astype(np.float32)
    for name in ("a", "b"):
        feeds[name] = RNG.standard_normal((3, steps, 3, 4)).astype(np.float32)
    body = _body("ab")  # s + a * b + a * b: no tensor from outside the body
    node = helper.make_node("Scan", ["lens", "s0", "m0", "a", "b"], ["s", "m", "z"], num_scan_inputs=2, body=body,
                            directions=directions)  # fmt: skip
    ins = [vi(k, TensorProto.INT64 if k == "lens" else F, v.shape) for k, v in feeds.items()]
    outs = [vi(o, F, None) for o in ("s", "m", "z")]
    proto = helper.make_model(helper.make_graph([node], "g", ins, outs), opset_imports=[helper.make_opsetid("", 8)])
    proto.ir_version = 7
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    want = dict(zip(("s", "m", "z"), sess.run(None, feeds), strict=True))
    got = burnedge.Session(burnedge.load(proto), backend="c", threads=2).run(feeds)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)
