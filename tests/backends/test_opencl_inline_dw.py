"""The OpenCL backend computes a depthwise convolution inside the 1x1 convolution after it (one launch fewer per
pair, ops_dense.depthwise_pairs): the outputs match the numpy backend within 1e-4, a run step by step still sees
the depthwise output, the planner keeps the depthwise input alive through the 1x1 step, and a bundle keeps the
choice. Reference: the numpy backend (ONNX's Conv semantics, written apart from any OpenCL)."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import burnedge
from burnedge.backends import lookup
from burnedge.compiler import plan as make_plan

pytest.importorskip("pyopencl", reason="the OpenCL backend needs the opencl extra")
opencl = lookup("opencl")
if opencl.unavailable_reason():
    pytest.skip(f"no OpenCL device: {opencl.unavailable_reason()}", allow_module_level=True)

from burnedge.backends.opencl.ops_dense import depthwise_pairs, inline_depthwise  # noqa: E402


def _chain(c=16, m=16, blocks=2, stride=1, dilation=1, one_d=False, shared=False) -> burnedge.Model:
    """stem conv -> blocks x (3x3 depthwise + bias + Relu -> 1x1 conv to m channels + Relu): in a plain chain
    the planner would put each 1x1 output over the depthwise input (two buffers, ping-pong). `shared`: the
    first depthwise output is also added to the output (a second reader)."""
    rng = np.random.default_rng(7)
    k = [3] if one_d else [3, 3]
    pads = [dilation] * (2 * len(k))
    shape = [1, 4, 9] if one_d else [1, 4, 9, 7]
    inits = [
        onnx.numpy_helper.from_array(rng.standard_normal([c, 4, *k]).astype(np.float32) * 0.3, "ws"),
    ]
    nodes = [helper.make_node("Conv", ["x", "ws"], ["h0"], pads=[1] * (2 * len(k)))]
    cur, ch = "h0", c
    for b in range(blocks):
        inits += [
            onnx.numpy_helper.from_array(rng.standard_normal([ch, 1, *k]).astype(np.float32) * 0.3, f"wd{b}"),
            onnx.numpy_helper.from_array(rng.standard_normal([ch]).astype(np.float32), f"bd{b}"),
            onnx.numpy_helper.from_array(rng.standard_normal([m, ch, *([1] * len(k))]).astype(np.float32), f"wp{b}"),
        ]
        nodes += [
            helper.make_node(
                "Conv", [cur, f"wd{b}", f"bd{b}"], [f"d{b}"], group=ch, pads=pads, strides=[stride] * len(k),
                dilations=[dilation] * len(k),
            ),
            helper.make_node("Relu", [f"d{b}"], [f"r{b}"]),
            helper.make_node("Conv", [f"r{b}", f"wp{b}"], [f"p{b}"]),
            helper.make_node("Relu", [f"p{b}"], [f"h{b + 1}"]),
        ]  # fmt: skip
        cur, ch = f"h{b + 1}", m
    out = cur
    if shared:
        nodes.append(helper.make_node("ReduceMean", ["r0"], ["side"], keepdims=1))
        nodes.append(helper.make_node("ReduceMean", [cur], ["main"], keepdims=1))
        nodes.append(helper.make_node("Add", ["main", "side"], ["y"]))
        out = "y"
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    return burnedge.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))


def _x(model: burnedge.Model) -> dict[str, np.ndarray]:
    (name,) = model.graph.inputs
    shape = model.graph.values[name].shape
    return {name: np.random.default_rng(8).standard_normal(shape).astype(np.float32)}


@pytest.mark.parametrize(
    "kw", [{}, {"stride": 2}, {"dilation": 2}, {"one_d": True}, {"c": 24, "m": 32, "blocks": 3}], ids=str
)
def test_depthwise_runs_inside_the_1x1_conv_and_matches_numpy(kw):
    model = _chain(**kw)
    feeds = _x(model)
    s = burnedge.Session(model, backend="opencl")
    exe = s.executable
    blocks = kw.get("blocks", 2)
    skipped = [ln for ln in exe.launches if ln.step_only]
    assert len(skipped) == blocks and exe.kernel_count == len(exe.launches) - blocks
    assert len(inline_depthwise(exe.plan)) == blocks  # the plan let every pair fuse (ping-pong chain)
    want = burnedge.Session(model, backend="numpy").run(feeds)
    got = s.run(feeds)
    for name, w in want.items():
        np.testing.assert_allclose(got[name], w, rtol=1e-4, atol=1e-4)
    again = [s.run_async(feeds) for _ in range(3)]
    assert all(np.array_equal(f.result(timeout=60)[n], got[n]) for f in again for n in got)


def test_the_planner_keeps_the_depthwise_input_alive_through_the_1x1_step(monkeypatch):
    """With the backend's extra reads no 1x1 output lies over the depthwise input it still reads; without them
    the chain's plan puts one there, and the emitter then keeps that pair as two kernels."""
    model = _chain()

    def overlapping(p) -> int:
        g = p.graph
        n = 0
        for step, dw in depthwise_pairs(g).items():
            src, dst = dw.inputs[0], g.nodes[step].outputs[0]
            a, b = p.offsets[src], p.offsets[dst]
            n += not (a + g.values[src].nbytes <= b or b + g.values[dst].nbytes <= a)
        return n

    p = make_plan(model, opencl)
    assert len(depthwise_pairs(p.graph)) == 2 and overlapping(p) == 0
    monkeypatch.setattr(type(opencl), "reads", lambda self, graph: {})
    bare = make_plan(model, opencl)
    assert overlapping(bare) > 0
    assert len(inline_depthwise(bare)) == 2 - overlapping(bare)


def test_wide_or_shared_depthwise_outputs_stay_separate_kernels():
    wide = burnedge.Session(_chain(c=256, m=128, blocks=1), backend="opencl").executable
    assert not any(ln.step_only for ln in wide.launches)  # 128 x 256: measured slower fused
    shared = _chain(shared=True)
    exe = burnedge.Session(shared, backend="opencl").executable
    assert sum(ln.step_only for ln in exe.launches) == 1  # the first depthwise has a second reader
    feeds = _x(shared)
    np.testing.assert_allclose(
        burnedge.Session(shared, backend="opencl").run(feeds)["y"],
        burnedge.Session(shared, backend="numpy").run(feeds)["y"], rtol=1e-4, atol=1e-4,
    )  # fmt: skip


def test_a_run_step_by_step_sees_every_depthwise_output():
    model = _chain()
    feeds = _x(model)
    checked = burnedge.Session(model, backend="checked<opencl>")
    checked.run(feeds)  # raises CheckError naming the step if a depthwise output were never written
    assert checked.executable.steps_checked == len(checked.executable.plan.steps)


def test_a_bundle_keeps_which_launches_a_run_skips(tmp_path):
    model = _chain()
    path = burnedge.export(model, tmp_path / "m.bedge", backend="opencl", test_vectors=1)
    bundle = burnedge.bundle.read(path)
    table = json.loads(bundle.member("opencl/launches.json"))
    assert sum(1 for ln in table["launches"] if ln.get("step_only")) == 2
    s = burnedge.Session(path, backend="opencl")
    assert s.executable.kernel_count == len(table["launches"]) - 2
    ((feeds, outs),) = bundle.vectors()
    for name, want in outs.items():
        np.testing.assert_allclose(s.run(feeds)[name], want, rtol=1e-4, atol=1e-4)
