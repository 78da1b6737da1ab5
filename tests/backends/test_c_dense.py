"""C backend dense kernels against the numpy reference: Conv (GEMM and depthwise paths), ConvTranspose, MatMul,
Gemm and the fused FusedConv / FusedGemm / FusedMatMul epilogues; thread-count independence; the portable build
(NCHW and NHWC conv kernels alike; test_c_conv_nhwc.py covers the NHWC chains in depth)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge.backends.c import build
from burnedge.backends.c.emit import weights_blob
from burnedge.backends.c.runtime import CModel
from tests.backends.c_helpers import prepare, slots

RNG = np.random.default_rng(0)
N = helper.make_node
ACTS = [("", []), ("Relu", []), ("Clip", [0.0, 6.0]), ("LeakyRelu", [0.1]), ("HardSigmoid", [0.2, 0.5]),
        ("HardSwish", []), ("Sigmoid", []), ("Tanh", []), ("Gelu", [])]  # fmt: skip


def _act(act: str, params: list[float]) -> dict:
    return {"domain": "burnedge", "activation": act, **({"activation_params": params} if params else {})}


def _rand(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _model(nodes, feeds: dict, outs: list[str], inits: dict) -> burnedge.Model:
    vi = helper.make_tensor_value_info
    ins = [vi(k, TensorProto.FLOAT, v.shape) for k, v in feeds.items()]
    o = [vi(k, TensorProto.UNDEFINED, None) for k in outs]
    g = helper.make_graph(nodes, "g", ins, o, [numpy_helper.from_array(a, n) for n, a in inits.items()])
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("burnedge", 1)]
    return burnedge.load(helper.make_model(g, opset_imports=opsets))


def _compare(want: dict, got: dict, outs: list[str]) -> None:
    for k in outs:
        w, c = want[k], got[k]
        assert c.dtype == w.dtype and c.shape == w.shape, (k, c.shape, w.shape)
        scale = max(float(np.abs(w).max(initial=0.0)), 1e-30)
        err = float(np.abs(w.astype(np.float64) - c).max(initial=0.0)) / scale
        assert err <= 1e-5, (k, err)


def _check(nodes, feeds: dict, outs: list[str], inits: dict | None = None) -> None:
    model = _model(nodes, feeds, outs, inits or {})
    _compare(burnedge.Session(model).run(feeds), burnedge.Session(model, backend="c").run(feeds), outs)


def _conv(name, x, w, b=None, **attrs):
    return N("Conv", [x, w] + ([b] if b else []), [name], **attrs)


def test_conv_gemm_path():
    feeds = {"x": _rand(2, 6, 13, 11), "x1": _rand(1, 5, 23)}
    inits = {"w3": _rand(10, 6, 3, 3), "b": _rand(10), "w1": _rand(17, 6, 1, 1), "w7": _rand(4, 6, 3, 5),
             "wg": _rand(8, 3, 3, 3), "wd": _rand(3, 5, 4), "bd": _rand(3)}  # fmt: skip
    nodes = [
        _conv("c0", "x", "w3", "b", pads=[1, 1, 1, 1]),
        _conv("c1", "x", "w3", "b", pads=[0, 2, 1, 0], strides=[2, 3]),
        _conv("c2", "x", "w3", None, dilations=[2, 1], pads=[2, 1, 2, 1]),
        _conv("c3", "x", "w1", None),
        _conv("c4", "x", "w1", None, strides=[2, 2]),
        _conv("c5", "x", "w7", None, auto_pad="SAME_UPPER", strides=[2, 1]),
        _conv("c6", "x", "w7", None, auto_pad="SAME_LOWER", strides=[1, 2]),
        _conv("c7", "x", "w7", None, auto_pad="VALID"),
        _conv("c8", "x", "wg", None, group=2, pads=[1, 1, 1, 1]),
        _conv("c9", "x1", "wd", "bd", pads=[1, 2], strides=[2], dilations=[2]),
        _conv("c10", "x", "w3", "b"),
    ]
    _check(nodes, feeds, [f"c{i}" for i in range(11)], inits)


def test_conv_depthwise_path():
    feeds = {"x": _rand(2, 4, 19, 37), "s": _rand(1, 3, 5, 3), "x1": _rand(1, 4, 40)}
    inits = {"w3": _rand(4, 1, 3, 3), "b": _rand(4), "w5": _rand(4, 1, 5, 5), "wm": _rand(8, 1, 3, 3),
             "w23": _rand(4, 1, 2, 3), "ws": _rand(3, 1, 3, 3), "w1d": _rand(4, 1, 5), "bm": _rand(8)}  # fmt: skip
    g = {"group": 4}
    nodes = [
        _conv("d0", "x", "w3", "b", pads=[1, 1, 1, 1], **g),
        _conv("d1", "x", "w3", "b", pads=[1, 1, 1, 1], strides=[2, 2], **g),
        _conv("d2", "x", "w5", None, pads=[2, 2, 2, 2], **g),
        _conv("d3", "x", "w5", None, pads=[1, 2, 2, 1], strides=[2, 2], **g),
        _conv("d4", "x", "wm", "bm", pads=[1, 1, 1, 1], **g),
        _conv("d5", "x", "w3", None, dilations=[2, 3], pads=[2, 3, 2, 3], **g),
        _conv("d6", "x", "w23", None, strides=[3, 2], **g),
        _conv("d7", "x", "w3", None, auto_pad="SAME_UPPER", strides=[2, 2], **g),
        _conv("d8", "s", "ws", None, pads=[1, 1, 1, 1], group=3),
        _conv("d9", "x1", "w1d", None, pads=[2, 2], **g),
    ]
    _check(nodes, feeds, [f"d{i}" for i in range(10)], inits)


@pytest.mark.parametrize("depthwise", [False, True])
def test_fused_conv_epilogues(depthwise):
    c, m = (6, 6) if depthwise else (5, 14)
    feeds = {"x": _rand(2, c, 9, 13), "r": _rand(2, m, 9, 13)}
    inits = {"w": _rand(m, 1 if depthwise else c, 3, 3), "b": _rand(m)}
    nodes, outs = [], []
    for i, (act, p) in enumerate(ACTS):
        ins = ["x", "w", "b", "r"] if i % 2 == 0 else ["x", "w", "", "r"] if i % 3 else ["x", "w", "b"]
        nodes.append(N("FusedConv", ins, [f"y{i}"], pads=[1, 1, 1, 1], group=c if depthwise else 1, **_act(act, p)))
        outs.append(f"y{i}")
    _check(nodes, feeds, outs, inits)


def test_conv_transpose():
    feeds = {"x": _rand(2, 4, 5, 7), "x1": _rand(1, 4, 9)}
    inits = {"w": _rand(4, 3, 3, 3), "b": _rand(6), "wg": _rand(4, 3, 2, 3), "w1": _rand(4, 2, 4)}
    nodes = [
        N("ConvTranspose", ["x", "w"], ["t0"]),
        N("ConvTranspose", ["x", "w", "b"], ["t1"], strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1], group=2),
        N("ConvTranspose", ["x", "wg", "b"], ["t2"], strides=[2, 3], pads=[0, 1, 1, 0], group=2, dilations=[2, 1]),
        N("ConvTranspose", ["x", "w"], ["t3"], strides=[2, 2], output_shape=[12, 15]),
        N("ConvTranspose", ["x", "w"], ["t4"], strides=[2, 2], auto_pad="SAME_UPPER"),
        N("ConvTranspose", ["x1", "w1"], ["t5"], strides=[3], pads=[1, 0]),
    ]
    _check(nodes, feeds, [f"t{i}" for i in range(6)], inits)


def test_matmul():
    feeds = {"a": _rand(2, 1, 13, 37), "b": _rand(5, 37, 33), "v": _rand(37), "m": _rand(13, 37), "u": _rand(33)}
    inits = {"w": _rand(37, 21), "w3": _rand(5, 37, 9), "wv": _rand(37)}
    nodes = [
        N("MatMul", ["a", "b"], ["y0"]),  # broadcast batch, both runtime
        N("MatMul", ["a", "w"], ["y1"]),  # constant B, batch folded into rows
        N("MatMul", ["a", "w3"], ["y2"]),  # constant batched B
        N("MatMul", ["v", "b"], ["y3"]),  # 1-D A
        N("MatMul", ["m", "v"], ["y4"]),  # 1-D B
        N("MatMul", ["v", "wv"], ["y5"]),  # both 1-D
        N("MatMul", ["m", "wv"], ["y6"]),
        N("MatMul", ["v", "w"], ["y7"]),  # 1-D A, constant B
    ]
    _check(nodes, feeds, [f"y{i}" for i in range(8)], inits)


def test_gemm():
    m, k, n = 13, 37, 33
    feeds = {"a": _rand(m, k), "at": _rand(k, m), "b": _rand(k, n), "bt": _rand(n, k), "c": _rand(m, n)}
    inits = {"w": _rand(k, n), "wt": _rand(n, k), "cn": _rand(n), "cm": _rand(m, 1), "c1": _rand(1, n),
             "cs": np.array(0.5, np.float32), "wa": _rand(m, k)}  # fmt: skip
    nodes = [
        N("Gemm", ["a", "w", "cn"], ["g0"]),
        N("Gemm", ["a", "wt", "cm"], ["g1"], transB=1, alpha=0.5, beta=2.0),
        N("Gemm", ["at", "w", "c1"], ["g2"], transA=1),
        N("Gemm", ["at", "wt", "cs"], ["g3"], transA=1, transB=1),
        N("Gemm", ["a", "b", "c"], ["g4"], alpha=1.5, beta=-1.0),
        N("Gemm", ["a", "bt"], ["g5"], transB=1),
        N("Gemm", ["wa", "b", "c"], ["g6"], alpha=2.0),  # constant A, runtime B
        N("Gemm", ["a", "w", "c"], ["g7"], beta=0.0),
    ]
    _check(nodes, feeds, [f"g{i}" for i in range(8)], inits)


def test_fused_gemm_and_matmul():
    feeds = {"a": _rand(7, 20), "r": _rand(7, 19), "x": _rand(2, 3, 20), "rx": _rand(2, 3, 19), "v": _rand(20),
             "rv": _rand(19)}  # fmt: skip
    inits = {"w": _rand(19, 20), "b": _rand(19), "wm": _rand(20, 19), "bm": _rand(3, 1)}
    nodes, outs = [], []
    for i, (act, p) in enumerate(ACTS):
        kw = _act(act, p)
        nodes.append(N("FusedGemm", ["a", "w", "b", "r"], [f"g{i}"], transB=1, alpha=0.5, **kw))
        nodes.append(N("FusedMatMul", ["x", "wm", "b", "rx"] if i % 2 else ["x", "wm", "", "rx"], [f"m{i}"], **kw))
        outs += [f"g{i}", f"m{i}"]
    nodes.append(N("FusedMatMul", ["x", "wm", "bm"], ["mb"], domain="burnedge", activation="Relu"))
    nodes.append(N("FusedMatMul", ["v", "wm", "b", "rv"], ["mv"], domain="burnedge", activation="Tanh"))
    nodes.append(N("FusedGemm", ["a", "w"], ["g_"], domain="burnedge", transB=1))
    _check(nodes, feeds, [*outs, "mb", "mv", "g_"], inits)


def _big_model():
    feeds = {"x": _rand(1, 16, 40, 40), "a": _rand(64, 96)}
    inits = {"w": _rand(32, 16, 3, 3) * 0.1, "wd": _rand(16, 1, 3, 3), "wm": _rand(96, 80), "b": _rand(96, 80),
             "wd32": _rand(32, 1, 3, 3), "w1": _rand(24, 32, 1, 1) * 0.2, "w8": _rand(8, 32, 3, 3) * 0.1,
             "w7": _rand(16, 32, 3, 3) * 0.1}  # fmt: skip
    nodes = [
        _conv("y0", "x", "w", None, pads=[1, 1, 1, 1]),
        _conv("y1", "x", "wd", None, pads=[1, 1, 1, 1], group=16),
        N("MatMul", ["a", "wm"], ["y2"]),
        N("Gemm", ["a", "b"], ["y3"], alpha=0.3),
        N("ConvTranspose", ["x", "wd"], ["y4"], strides=[2, 2]),
        # a chain of convs: its inner tensors are NHWC (conv_nhwc.c, conv_dw_nhwc.c, conv_wino.c)
        _conv("h", "x", "w", None, pads=[1, 1, 1, 1], strides=[2, 2]),
        _conv("hd", "h", "wd32", None, pads=[1, 1, 1, 1], group=32),
        _conv("y5", "hd", "w1", None),
        _conv("y6", "hd", "w8", None, pads=[1, 1, 1, 1]),
        _conv("y7", "hd", "w7", None, pads=[1, 1, 1, 1]),  # Winograd (conv_wino.c)
    ]
    return _model(nodes, feeds, [f"y{i}" for i in range(8)], inits), feeds, [f"y{i}" for i in range(8)]


def test_results_do_not_depend_on_threads():
    model, feeds, outs = _big_model()
    one = burnedge.Session(model, backend="c", threads=1).run(feeds)
    for threads in (2, 3):
        many = burnedge.Session(model, backend="c", threads=threads).run(feeds)
        for k in outs:
            np.testing.assert_array_equal(one[k], many[k], err_msg=k)


def test_portable_kernels():
    """The kernel library built without its AVX2 paths gives the same results (within float rounding)."""
    model, feeds, outs = _big_model()
    host = build.host_toolchain()
    tc = build.Toolchain(host.cc, (*host.cflags, "-DBURNEDGE_PORTABLE"), host.ldflags, host.ar, "portable")
    plan, emitted = prepare(model.graph)
    ins, o, consts = slots(plan)
    cm = CModel(build.build_model(emitted.source, tc), weights_blob(emitted), ins, o, consts, 2)
    _compare(burnedge.Session(model).run(feeds), cm.run(feeds), outs)
