"""C backend vs the numpy reference (itself checked by the ONNX node tests) on the ai.onnx.preview.training
optimizers Adagrad, Momentum and Adam: float32 and float64, several tensors, the first step (T = 0) and later
ones, outputs left out; a bad mode or type is a one-line error naming the node."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import burnedge
from burnedge.backends.c.lower import LowerError

from .c_helpers import ONNX_TYPE

RNG = np.random.default_rng(29)
TRAINING = "ai.onnx.preview.training"
STATES = {"Adagrad": 1, "Momentum": 1, "Adam": 2}
ATTRS = {
    "Adagrad": dict(decay_factor=0.1, epsilon=1e-5, norm_coefficient=0.01),
    "Momentum": dict(alpha=0.9, beta=0.3, mode="nesterov", norm_coefficient=0.02),
    "Adam": dict(alpha=0.85, beta=0.95, epsilon=1e-4, norm_coefficient=0.01, norm_coefficient_post=0.05),
}


def _model(op: str, dtype, sizes: list[int], outputs: list[str], attrs: dict, t_type=TensorProto.INT64):
    kinds = 2 + STATES[op]
    names = [f"{k}{i}" for k in "xgvh"[:kinds] for i in range(len(sizes))]
    t = ONNX_TYPE[np.dtype(dtype)]
    ins = [helper.make_tensor_value_info("R", t, []), helper.make_tensor_value_info("T", t_type, [])]
    ins += [helper.make_tensor_value_info(n, t, [sizes[int(n[1:])]]) for n in names]
    outs = [helper.make_tensor_value_info(o, t, None) for o in outputs if o]
    node = helper.make_node(op, ["R", "T", *names], outputs, domain=TRAINING, name="opt", **attrs)
    graph = helper.make_graph([node], "g", ins, outs)
    opsets = [helper.make_opsetid("", 21), helper.make_opsetid(TRAINING, 1)]
    return burnedge.load(helper.make_model(graph, opset_imports=opsets)), names


def _feeds(names, sizes, dtype, step: int) -> dict:
    feeds = {"R": np.array(0.1, dtype), "T": np.array(step, np.int64)}
    for n in names:
        v = RNG.standard_normal(sizes[int(n[1:])]).astype(dtype)
        feeds[n] = np.abs(v) if n[0] == "h" else v  # Adam's and Adagrad's squared-gradient state is >= 0
    return feeds


@pytest.mark.parametrize("op", ["Adagrad", "Momentum", "Adam"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("step", [0, 3])
def test_optimizer(op, dtype, step):
    sizes = [5, 1, 300]
    n_out = len(sizes) * (1 + STATES[op])
    outputs = [f"o{k}" for k in range(n_out)]
    outputs[1] = ""  # an output left out is not written
    model, names = _model(op, dtype, sizes, outputs, ATTRS[op])
    feeds = _feeds(names, sizes, dtype, step)
    want = burnedge.Session(model).run(feeds)
    got = burnedge.Session(model, backend="c").run(feeds)
    assert set(got) == set(want) == {o for o in outputs if o}
    for name, w in want.items():
        assert got[name].dtype == w.dtype and got[name].shape == w.shape, name
        np.testing.assert_allclose(got[name], w, rtol=1e-6 if dtype == np.float32 else 1e-13, atol=0)


def test_momentum_standard_mode_and_a_bad_mode():
    sizes = [7]
    attrs = dict(ATTRS["Momentum"], mode="standard")
    model, names = _model("Momentum", np.float32, sizes, ["x", "v"], attrs)
    feeds = _feeds(names, sizes, np.float32, 1)
    want, got = burnedge.Session(model).run(feeds), burnedge.Session(model, backend="c").run(feeds)
    for name in ("x", "v"):
        np.testing.assert_allclose(got[name], want[name], rtol=1e-6)
    with pytest.raises(burnedge.BurnedgeError, match=r"node 'opt' \(Momentum\).*'heavy'"):
        _model("Momentum", np.float32, sizes, ["x", "v"], dict(attrs, mode="heavy"))


def test_mixed_types_name_the_node():
    sizes = [3]
    model, _ = _model("Adagrad", np.float32, sizes, ["x", "h"], ATTRS["Adagrad"], t_type=TensorProto.INT32)
    with pytest.raises(LowerError, match=r"node 'opt' \(Adagrad\): T must be one int64, not int32"):
        burnedge.Session(model, backend="c")
