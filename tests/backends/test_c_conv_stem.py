"""C backend stem convolution (conv_stem.c): which convs take it, and its results against the numpy reference over
strides, dilations, pads, odd planes, channel counts, epilogues, both output layouts, batches, threads and the
portable build."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import burnedge
from burnedge.backends.c import build
from burnedge.backends.c.emit import weights_blob
from burnedge.backends.c.lower.conv import _plan
from burnedge.backends.c.runtime import CModel
from burnedge.passes import optimize
from tests.backends.c_helpers import prepare, slots

from .test_c_conv_nhwc import _model, _rand  # the graph builders of the NHWC conv tests

N = helper.make_node


def _stem_model(
    c=3, m=8, hw=(17, 23), k=3, stride=1, dil=1, pads=None, act="Relu", params=(), batch=1, bias=True, then_dw=False
):
    """x (NCHW) -> FusedConv (the stem) [-> depthwise 3x3, so the stem writes NHWC]."""
    h, w = hw
    feeds = {"x": _rand(batch, c, h, w)}
    inits = {"w": _rand(m, c, k, k, scale=0.5), "wd": _rand(m, 1, 3, 3, scale=0.5)}
    ins = ["x", "w"]
    if bias:
        inits["b"] = _rand(m)
        ins.append("b")
    pad = [k // 2 * dil] * 4 if pads is None else pads
    extra = {"activation": act, **({"activation_params": list(params)} if params else {})} if act else {}
    nodes = [N("FusedConv", ins, ["s"], domain="burnedge", pads=pad, strides=[stride, stride],
               dilations=[dil, dil], **extra)]  # fmt: skip
    outs = ["s"]
    if then_dw:
        nodes.append(N("Conv", ["s", "wd"], ["y"], pads=[1, 1, 1, 1], group=m))
        outs = ["y"]
    return _model(nodes, feeds, outs, inits), feeds, outs


def _kind(model: burnedge.Model, name: str = "s") -> str:
    g = optimize(model.graph.copy())
    return next(_plan(g, n)[0] for n in g.nodes if n.outputs[0] == name)


def _compare(want: dict, got: dict, outs: list[str]) -> None:
    for k in outs:
        w, c = want[k], got[k]
        assert c.shape == w.shape, (k, c.shape, w.shape)
        err = float(np.abs(w.astype(np.float64) - c).max()) / max(float(np.abs(w).max()), 1e-30)
        assert err <= 1e-5, (k, err)


def test_which_convs_take_the_stem():
    assert _kind(_stem_model()[0]) == "stem"
    assert _kind(_stem_model(then_dw=True)[0]) == "stem"  # NHWC output
    assert _kind(_stem_model(c=1, m=1, k=5)[0]) == "stem"
    assert _kind(_stem_model(m=16)[0]) == "nhwc"  # more output channels: the 16-wide NHWC tiles win
    assert _kind(_stem_model(c=5)[0]) == "nhwc"  # more input channels
    assert _kind(_stem_model(k=1)[0]) != "stem"  # one tap: a plain GEMM


@pytest.mark.parametrize(
    "case",
    [
        dict(),
        dict(then_dw=True),
        dict(stride=2, hw=(96, 96)),
        dict(stride=2, hw=(33, 29), then_dw=True),
        dict(stride=3, hw=(20, 26), k=5),
        dict(k=7, stride=2, hw=(30, 31), c=3, m=4),
        dict(dil=2, hw=(19, 25), then_dw=True),
        dict(c=1, m=1, k=5, hw=(9, 50)),
        dict(c=4, m=6, hw=(8, 8)),  # a partial group of 4 output channels
        dict(c=2, m=5, then_dw=True),  # ... written channels-last
        dict(pads=[0, 2, 1, 0], hw=(12, 40)),  # asymmetric pads
        dict(pads=[0, 0, 0, 0], stride=2, hw=(25, 25)),
        dict(act="Clip", params=(0.0, 6.0), stride=2, hw=(26, 50)),
        dict(act="", bias=False),
        dict(act="HardSwish", then_dw=True),  # the generic epilogue
        dict(act="LeakyRelu", params=(0.1,), stride=2, hw=(18, 27)),
        dict(batch=3, stride=2, hw=(14, 30)),
        dict(batch=2, then_dw=True, hw=(11, 49)),
    ],
    ids=lambda d: ",".join(f"{k}={v}" for k, v in d.items()) or "default",
)
def test_stem_matches_numpy(case):
    model, feeds, outs = _stem_model(**case)
    assert _kind(model) == "stem"
    _compare(burnedge.Session(model).run(feeds), burnedge.Session(model, backend="c").run(feeds), outs)


def test_threads_give_identical_results():
    model, feeds, outs = _stem_model(stride=2, hw=(64, 48), batch=2, then_dw=True)
    one = burnedge.Session(model, backend="c").run(feeds)
    for threads in (2, 3):
        many = burnedge.Session(model, backend="c", threads=threads).run(feeds)
        for k in outs:
            np.testing.assert_array_equal(one[k], many[k], err_msg=k)


@pytest.mark.parametrize("then_dw", [False, True])
def test_portable_build(then_dw):
    """The kernel library without its AVX2 paths (what ARM and RISC-V boards run) gives the same results."""
    model, feeds, outs = _stem_model(stride=2, hw=(31, 45), m=6, act="Clip", params=(0.0, 6.0), then_dw=then_dw)
    host = build.host_toolchain()
    tc = build.Toolchain(host.cc, (*host.cflags, "-DBURNEDGE_PORTABLE"), host.ldflags, host.ar, "portable")
    plan, emitted = prepare(model.graph)
    assert "be_conv_stem_f32(" in emitted.source
    ins, o, consts = slots(plan)
    cm = CModel(build.build_model(emitted.source, tc), weights_blob(emitted), ins, o, consts, 1)
    _compare(burnedge.Session(model).run(feeds), cm.run(feeds), outs)


@pytest.mark.parametrize("act,params", [("Relu", ()), ("Clip", (0.0, 6.0))])
def test_nan_passes_the_activation(act, params):
    model, feeds, outs = _stem_model(act=act, params=params, stride=2, hw=(20, 40))
    feeds["x"][0, 0, 5, 7] = np.nan
    got, want = burnedge.Session(model, backend="c").run(feeds)["s"], burnedge.Session(model).run(feeds)["s"]
    assert np.isnan(want).any()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
