"""C backend int8 kernels against the int8 spec, byte for byte (continued from test_c_int8.py): QAdd/QMul with
broadcasting, QLut, QRequant, ONNX QuantizeLinear/DequantizeLinear, QSoftmax, QAvgPool/QGlobalAvgPool, int8 MaxPool
and movement ops; a chain; the portable (no AVX2) build; onnxruntime's QDQ suite models."""

from __future__ import annotations

import numpy as np
import pytest

import burnedge
from burnedge.backends.c import build
from burnedge.backends.c.emit import weights_blob
from burnedge.backends.c.runtime import CModel
from tests.backends.c_helpers import prepare, slots
from tests.backends.int8_graphs import (
    I8,
    RNG,
    G,
    add_attrs,
    chain,
    i8,
    nhwc_chain,
    qconv,
    rq_attrs,
    same,
    softmax_table,
    stem_chain,
)


# -- elementwise ----------------------------------------------------------------------------------------------------
def test_qadd_qmul_broadcasting():
    g = G()
    a = g.input("a", i8(2, 3, 5, 17))
    b = g.input("b", i8(2, 3, 5, 17))
    c = g.input("c", i8(3, 1, 1))
    d = g.input("d", i8(17))
    e = g.input("e", i8(2, 1, 5, 1))
    zps = {"a_zero_point": -3, "b_zero_point": 100, "y_zero_point": -128}
    for i, (x, y) in enumerate([(a, b), (a, c), (d, a), (a, e), (e, d), (c, d)]):
        g.node("QAdd", [x, y], f"add{i}", **zps, **add_attrs(int(RNG.integers(30, 35))))
        g.node("QMul", [x, y], f"mul{i}", **zps, multiplier=int(RNG.integers(2**30, 2**31)),
               shift=int(RNG.integers(-12, -4)))  # fmt: skip
    for i, shift in enumerate([1, 5, 9, 10, 31, 45, 62]):  # scalar and vector QAdd paths
        g.node("QAdd", [a, b], f"adds{i}", a_zero_point=127, b_zero_point=-128, y_zero_point=5,
               **add_attrs(shift), y_min=-50, y_max=60)  # fmt: skip
    for i, shift in enumerate([-40, -31, -20, 0, 5, 40]):
        g.node("QMul", [a, b], f"muls{i}", a_zero_point=-128, b_zero_point=127, multiplier=2**31 - 1, shift=shift)
    g.node("QMul", [a, b], "mul0m", multiplier=0, shift=-3)
    big = g.input("big", i8(70000))
    g.node("QAdd", [big, big], "addbig", a_zero_point=1, **add_attrs(31))
    g.check()
    g.check(threads=2)


def test_qlut_qrequant():
    g = G()
    x = g.input("x", np.concatenate([np.arange(-128, 128), i8(1000)]).astype(I8).reshape(4, -1))
    g.node("QLut", [x], "lut", table=i8(256))
    for i, (m, sh) in enumerate([(1518500250, 0), (2**30, -3), (2**31 - 1, -30), (2**30, 3), (0, 0), (1 << 30, 31)]):
        g.node("QRequant", [x], f"rq{i}", x_zero_point=i * 20 - 60, y_zero_point=-i * 7, multiplier=m, shift=sh)
    g.check()


def test_quantize_dequantize_linear():
    g = G()
    x = g.input("x", (RNG.standard_normal((2, 5, 7, 9)) * 40).astype(np.float32))
    half = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, 127.5, -128.5, 1e9, -1e9, np.inf, -np.inf, 3.49999]
    half = np.array(half, np.float32)
    h = g.input("h", np.concatenate([half, half * 0.3]).astype(np.float32))
    one = np.array(1.0, np.float32)
    for i, (s, zp) in enumerate([(0.37, -5), (1.0, 0), (0.1, 120), (2.5, -128)]):
        q = g.node("QuantizeLinear", [x, g.const(f"s{i}", np.array(s, np.float32)), g.const(f"z{i}", np.array(zp, I8))],
                   f"q{i}", domain="")  # fmt: skip
        g.node("DequantizeLinear", [q, f"s{i}", f"z{i}"], f"dq{i}", domain="")
        g.node("QuantizeLinear", [x, f"s{i}", g.const(f"u{i}", np.array(zp + 128, np.uint8))], f"qu{i}", domain="")
    g.node("QuantizeLinear", [h, g.const("one", one), "z0"], "qh", domain="")
    g.node("QuantizeLinear", [h, g.const("o3", np.array(0.3, np.float32))], "qh3", domain="")
    sc = (RNG.random(5) + 0.05).astype(np.float32)
    zc = i8(5)
    q = g.node("QuantizeLinear", [x, g.const("sc", sc), g.const("zc", zc)], "qa", domain="", axis=1)
    g.node("DequantizeLinear", [q, "sc", "zc"], "dqa", domain="", axis=1)
    sw = (RNG.random(9) + 0.05).astype(np.float32)
    g.node("QuantizeLinear", [x, g.const("sw", sw), g.const("zw", (i8(9).astype(np.int16) + 128).astype(np.uint8))],
           "qw", domain="", axis=-1)  # fmt: skip
    i32 = g.input("i32", RNG.integers(-(2**31), 2**31, 300).astype(np.int32))
    g.node("DequantizeLinear", [i32, g.const("s32", np.array(1e-3, np.float32))], "dq32", domain="")
    g.check()


# -- softmax and pools ----------------------------------------------------------------------------------------------
def test_qsoftmax():
    g = G()
    x = i8(3, 7, 10)
    x[0, 0] = 5  # ties
    x[0, 1] = -128
    x[0, 2, :5], x[0, 2, 5:] = 127, -128  # extremes
    x[0, 3] = [127] + [-128] * 9
    xi = g.input("x", x)
    for i, (axis, scale) in enumerate([(-1, 0.05), (1, 0.2), (0, 0.01), (2, 1.0), (-1, 1e-4)]):
        g.node("QSoftmax", [xi], f"sm{i}", axis=axis, table=softmax_table(scale))
    wide = g.input("w", i8(2, 3000))
    g.node("QSoftmax", [wide], "smw", axis=-1, table=softmax_table(0.02))
    g.check()


def test_qpools():
    g = G()
    x = g.input("x", i8(2, 3, 11, 14))
    x1 = g.input("x1", i8(2, 3, 19))
    cases = [
        dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1),
        dict(kernel_shape=[2, 3], strides=[1, 2], ceil_mode=1),
        dict(kernel_shape=[3, 2], dilations=[2, 2], pads=[2, 0, 1, 1]),
        dict(kernel_shape=[3, 3], auto_pad="SAME_UPPER", strides=[2, 2]),
        dict(kernel_shape=[11, 14]),  # the whole plane: a global pool
    ]
    for i, c in enumerate(cases):
        g.node("QAvgPool", [x], f"ap{i}", zero_point=int(RNG.integers(-128, 128)), **c)
    g.node("QAvgPool", [x1], "ap1d", kernel_shape=[4], strides=[3], pads=[1, 2], zero_point=-7)
    g.node("QGlobalAvgPool", [x], "gap", zero_point=-100)
    g.node("QGlobalAvgPool", [g.input("big", i8(1, 2, 40, 41))], "gapbig", zero_point=17)
    g.node("MaxPool", [x], "mp", domain="", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    g.node("GlobalMaxPool", [x], "gmp", domain="")
    # rows of over 64 stride-2 outputs (the deinterleaved blocks of pool_loops.h, and their tail), widths 2 to 16
    wide = g.input("xw", i8(1, 2, 5, 300))
    for k in (2, 3, 5, 16):
        g.node("MaxPool", [wide], f"mpw{k}", domain="", kernel_shape=[3, k], strides=[1, 2], pads=[1, k // 2, 0, 1])
    g.check()


def test_int8_movement_ops():
    g = G()
    x = g.input("x", i8(2, 3, 4, 5))
    y = g.input("y", i8(2, 2, 4, 5))
    g.node("Concat", [x, y], "cat", domain="", axis=1)
    g.node("Transpose", [x], "tr", domain="", perm=[0, 2, 3, 1])
    g.node("Reshape", [x, g.const("sh", np.array([2, -1], np.int64))], "rs", domain="")
    g.node("Slice", [x, g.const("st", np.array([1], np.int64)), g.const("en", np.array([3], np.int64)),
                     g.const("ax", np.array([1], np.int64))], "sl", domain="")  # fmt: skip
    g.node("Flatten", [x], "fl", domain="", axis=2)
    g.check()


# -- a chain, and the portable build --------------------------------------------------------------------------------
def test_chain():
    chain().check()


def test_portable_kernels():
    """The kernel library built without its AVX2 paths gives the same bytes."""
    host = build.host_toolchain()
    tc = build.Toolchain(host.cc, (*host.cflags, "-DBURNEDGE_PORTABLE"), host.ldflags, host.ar, "portable")
    for g in (chain(), _portable_cases(), nhwc_chain(), stem_chain()):
        plan, emitted = prepare(g.model().graph)
        ins, o, consts = slots(plan)
        cm = CModel(build.build_model(emitted.source, tc), weights_blob(emitted), ins, o, consts, 2)
        same(g, cm.run(g.feeds()))


def _portable_cases() -> G:
    g = G()
    x = g.input("x", i8(1, 6, 9, 10))
    qconv(g, "c", x, 8, 3, (3, 3), group=2, pads=[1, 0, 1, 2], strides=[1, 2], xzp=9)
    qconv(g, "d", x, 12, 1, (3, 3), group=6, pads=[1, 1, 1, 1], strides=[2, 1], xzp=-9, rq=rq_attrs(12, -2, 1))
    g.node("QAdd", [x, x], "a", a_zero_point=1, b_zero_point=2, **add_attrs(33))
    g.node("QMul", [x, g.input("b", i8(1, 6, 1, 10))], "m", multiplier=2**30, shift=-6)
    g.node("QRequant", [x], "rq_attrs", x_zero_point=4, y_zero_point=-4, multiplier=1518500250, shift=1)
    xf = g.input("xf", (RNG.standard_normal((3, 40)) * 9).astype(np.float32))
    g.node("QuantizeLinear", [xf, g.const("s", np.array(0.07, np.float32)), g.const("z", np.array(-2, I8))], "q",
           domain="")  # fmt: skip
    g.node("QGlobalAvgPool", [g.input("big", i8(1, 2, 40, 41))], "gap", zero_point=17)
    return g


# -- a quantized suite model ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["ds_cnn", "resnet8"])
def test_quantized_suite_model(name, tmp_path):
    """onnxruntime's per-channel QDQ model, folded into burnedge int8 ops: C gives the numpy reference's bytes."""
    import os
    from pathlib import Path

    quant = pytest.importorskip("onnxruntime.quantization")
    from tests.models import suite

    cache = Path(os.environ.get("BURNEDGE_MODEL_CACHE") or tmp_path)
    path = suite.build_model(name, cache)
    calib = iter([suite.example_feeds(path, seed=s) for s in range(1, 4)])

    class Reader(quant.CalibrationDataReader):
        def get_next(self):
            return next(calib, None)

    qpath = tmp_path / "q.onnx"
    quant.quantize_static(str(path), str(qpath), Reader(), quant_format=quant.QuantFormat.QDQ, per_channel=True,
                          activation_type=quant.QuantType.QInt8, weight_type=quant.QuantType.QInt8)  # fmt: skip
    model = burnedge.load(qpath)
    plan, _ = prepare(model.graph)
    assert sum(s.op_type == "QConv" for s in plan.steps) >= 5
    feeds = suite.example_feeds(path, seed=0)
    want = burnedge.Session(burnedge.Model(plan.graph, name)).run(feeds)  # the folded int8 graph, on numpy
    got = burnedge.Session(model, backend="c").run(feeds)
    for k, w in want.items():
        assert np.array_equal(got[k], w), k
