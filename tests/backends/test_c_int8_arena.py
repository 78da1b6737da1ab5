"""int8 memory on the C backend: an int8 plan's arena is never above the float plan's of the same model, and no
int8 conv asks for more scratch than the float kernel of the same conv, or 64 KiB (bounded bands, slices only for
the threads a kernel can use); the banded depthwise kernel still gives the spec's bytes on any thread count."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge import compiler
from burnedge.backends.c import BACKEND
from burnedge.backends.c.lower.qconv import _qconv_geo
from burnedge.quantize import quantize_model
from tests.backends.int8_graphs import G, i8, qconv
from tests.models import suite

RNG = np.random.default_rng(7)
SMALL = 64 * 1024  # scratch below this (a few per-thread row panels) is no memory concern


def _plans(model: burnedge.Model, feeds: dict[str, np.ndarray]):
    """The float plan and the int8 plan (one calibration batch) of `model` for the C backend."""
    graph, _ = quantize_model(model, [feeds], progress=False, report_batches=1)
    int8 = compiler.plan(burnedge.Model(graph, "int8"), BACKEND, compiler.Options(qdq=False))
    return compiler.plan(model, BACKEND), int8


def _conv(nodes, inits, x, y, cin, cout, k, stride=1, group=1, relu=True):
    w = (RNG.standard_normal((cout, cin // group, k, k)) * (2 / (cin // group * k * k)) ** 0.5).astype(np.float32)
    inits += [
        numpy_helper.from_array(w, f"{y}_w"),
        numpy_helper.from_array(RNG.normal(0, 0.1, cout).astype(np.float32), f"{y}_b"),
    ]
    out = f"{y}_c" if relu else y
    nodes.append(helper.make_node("Conv", [x, f"{y}_w", f"{y}_b"], [out], name=y, kernel_shape=[k, k],
                                  strides=[stride, stride], pads=[k // 2] * 4, group=group))  # fmt: skip
    if relu:
        nodes.append(helper.make_node("Relu", [out], [y]))
    return y


def _mobile_block() -> onnx.ModelProto:
    """A MobileNetV3-like stem and inverted residuals on a 112x112 plane (the depthwise convs whose whole-plane float
    copies made the int8 arena ~3x the float one), a 3x3 conv of 64 channels on 28x28, and a classifier head."""
    nodes, inits = [], []
    x = _conv(nodes, inits, "image", "stem", 3, 16, 3, stride=2)
    x = _conv(nodes, inits, x, "expand", 16, 96, 1)
    x = _conv(nodes, inits, x, "dw", 96, 96, 3, stride=2, group=96)
    x = _conv(nodes, inits, x, "project", 96, 64, 1, relu=False)
    x = _conv(nodes, inits, x, "dw2", 64, 64, 5, stride=2, group=64)
    x = _conv(nodes, inits, x, "wide", 64, 64, 3)
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pooled"]))
    nodes.append(helper.make_node("Flatten", ["pooled"], ["flat"]))
    inits.append(numpy_helper.from_array((RNG.standard_normal((64, 10)) * 0.1).astype(np.float32), "fc_w"))
    nodes.append(helper.make_node("MatMul", ["flat", "fc_w"], ["logits"]))
    graph = helper.make_graph(
        nodes,
        "mobile_block",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 224, 224])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_int8_convs_need_no_more_scratch_than_float_ones():
    model = burnedge.load(_mobile_block())
    fp, ip = _plans(model, {"image": RNG.standard_normal((1, 3, 224, 224)).astype(np.float32)})
    float_scratch = {n.name: BACKEND.scratch(fp.graph, n) for n in fp.graph.nodes}
    convs = [n for n in ip.graph.nodes if n.op_type == "QConv"]
    assert len(convs) == 6, [n.op_type for n in ip.graph.nodes]
    for n in convs:
        got, want = BACKEND.scratch(ip.graph, n), float_scratch[n.name]
        assert got <= max(want, SMALL), f"{n.name}: int8 scratch {got} B > float {want} B"
    assert ip.arena_bytes <= fp.arena_bytes, f"int8 arena {ip.arena_bytes} B > float {fp.arena_bytes} B"


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = os.environ.get("BURNEDGE_MODEL_CACHE")
    return Path(env) if env else tmp_path_factory.mktemp("models")


def _suite_params():
    for name in sorted(suite.MODELS):
        marks = []
        if name == "fc_autoencoder":  # 640-wide MLP: the float arena is 3 KB, below the int8 plan's lower bound
            reason = "the boundary copies (float input + int8 copy: 3200 B) alone exceed the 3072 B float arena"
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        yield pytest.param(name, marks=marks)


@pytest.mark.parametrize("name", _suite_params())
def test_suite_int8_arena_not_above_float(name: str, model_cache: Path):
    path = suite.build_model(name, model_cache)
    fp, ip = _plans(burnedge.load(path), suite.example_feeds(path, 0))
    assert ip.arena_bytes <= fp.arena_bytes, f"{name}: int8 arena {ip.arena_bytes} B > float {fp.arena_bytes} B"


def test_banded_kernels_are_bit_exact():
    """Depthwise convs (multiplier 1) cut into many bands of output rows, a short last band, and rows wider than one
    band's budget (one row per band between channels-last convs; the per-plane kernel between NCHW tensors), and
    channels-last implicit GEMMs over banded padded copies, on 1 and 3 threads, byte for byte against the spec."""
    g = G()
    x = g.input("x", i8(2, 24, 40, 37))
    w = g.input("w", i8(1, 256, 6, 40))
    qconv(g, "a", x, 24, 1, (3, 3), group=24, pads=[1, 1, 1, 1], xzp=-5, yzp=3)
    qconv(g, "b", x, 24, 1, (5, 5), group=24, pads=[2, 1, 2, 2], strides=[2, 2], xzp=7)
    qconv(g, "c", x, 24, 1, (3, 3), group=24, dilations=[2, 2], pads=[2, 2, 2, 2], xzp=-128)
    qconv(g, "d", w, 256, 1, (3, 3), group=256, pads=[1, 1, 1, 1], xzp=1, y_min=-50, y_max=60)
    e = qconv(g, "e", w, 256, 256, (1, 1), xzp=-2, output=False)  # -> NHWC
    e = qconv(g, "f", e, 256, 1, (3, 3), group=256, pads=[1, 1, 1, 1], xzp=4, output=False)  # one row per band
    qconv(g, "h", e, 16, 256, (1, 1), xzp=3)
    v = g.input("v", i8(1, 24, 19, 150))  # channels-last implicit GEMM: padded copies of bands of 15 rows, then 4
    n1 = qconv(g, "n1", v, 8, 24, (3, 3), pads=[1, 1, 1, 1], xzp=-9, yzp=2, output=False)
    qconv(g, "n2", n1, 8, 8, (3, 5), pads=[1, 2, 0, 1], strides=[2, 3], xzp=2)
    graph = g.model().graph
    kinds = {n.name: _qconv_geo(graph, n)[0::2] for n in graph.nodes}
    assert kinds["a"][0] == kinds["f"][0] == "dwc" and kinds["f"][1] == 3 and kinds["d"] == ("dw", 0), kinds
    assert kinds["n1"] == ("nhwc", 2) and kinds["n2"] == ("nhwc", 1), kinds
    for threads in (1, 3):
        g.check(threads)
