"""C backend int8 kernels against the int8 spec (burnedge/ops/quantized.py), asserted byte for byte: requantisation
parameters, QConv (GEMM, depthwise, channels-last and stem paths; extreme accumulators; thread-count independence)
and QMatMul. The elementwise, softmax, pool and movement kernels, the portable build and a quantized suite model are
in test_c_int8_ops.py."""

from __future__ import annotations

import numpy as np
import pytest

import burnedge
from burnedge.backends.c.lower.layout import nhwc_int8_tensors
from burnedge.backends.c.lower.quantized import rq_params
from burnedge.ops.fixedpoint import requantize
from tests.backends.c_helpers import prepare
from tests.backends.int8_graphs import I8, RNG, G, add_attrs, i8, nhwc_chain, qconv, rq_attrs, same, stem_chain


# -- requantisation parameters --------------------------------------------------------------------------------------
def test_rq_params_normalisation_matches_requantize():
    """The normalised (m, s, lim) give requantize's bytes, incl. zero multipliers and extreme shifts."""
    mults = np.array([0, 1, 2**30, 2**31 - 1, 1234567890, 2**30 + 1, 1717986918, 2**31 - 1, 2**30], np.int64)
    shifts = np.array([-5, -40, -32, 0, 1, 30, 31, 40, -31], np.int64)
    acc = np.concatenate([np.arange(-600, 600), [-(2**31), 2**31 - 1, -(2**30), 2**30, 70000, -70000]])
    acc = np.concatenate([acc, RNG.integers(-(2**31), 2**31, 2000)])
    for mv, sv in zip(mults, shifts):
        for sh in [sv, *range(-35, 33, 1)]:
            want = requantize(acc, int(mv), int(sh), 3)
            m, s, lim = (int(v[0]) for v in rq_params(mv, sh, 1))
            a = np.clip(acc, -lim, lim).astype(np.int64)
            got = np.clip(3 + ((a * m + (1 << (s - 1))) >> s), -128, 127).astype(I8)
            assert np.array_equal(got, want), (mv, sh)


# -- QConv ----------------------------------------------------------------------------------------------------------
def test_qconv_gemm_path():
    g = G()
    x = g.input("x", i8(2, 6, 13, 11))
    x1 = g.input("x1", i8(1, 5, 23))
    qconv(g, "c0", x, 10, 6, (3, 3), pads=[1, 1, 1, 1], xzp=-7, yzp=3)
    qconv(g, "c1", x, 10, 6, (3, 3), pads=[0, 2, 1, 0], strides=[2, 3], xzp=100, yzp=-20)
    qconv(g, "c2", x, 7, 6, (3, 3), bias=False, dilations=[2, 1], pads=[2, 1, 2, 1], xzp=-128)
    qconv(g, "c3", x, 17, 6, (1, 1), xzp=5)
    qconv(g, "c4", x, 17, 6, (1, 1), strides=[2, 2], xzp=127, y_min=0, y_max=100)
    qconv(g, "c5", x, 4, 6, (3, 5), auto_pad="SAME_UPPER", strides=[2, 1], xzp=-3)
    qconv(g, "c6", x, 4, 6, (3, 5), auto_pad="SAME_LOWER", strides=[1, 2], xzp=9)
    qconv(g, "c7", x, 4, 6, (3, 5), auto_pad="VALID")
    qconv(g, "c8", x, 8, 3, (3, 3), group=2, pads=[1, 1, 1, 1], xzp=-50, yzp=50)
    qconv(g, "c9", x1, 3, 5, (4,), pads=[1, 2], strides=[2], dilations=[2], xzp=11)
    qconv(g, "c10", x, 12, 1, (3, 3), group=6, pads=[2, 2, 2, 2], xzp=1)  # multiplier 2: GEMM path per group
    qconv(g, "c11", x, 6, 2, (2, 2), group=3, strides=[2, 2], rq=rq_attrs(6, -3, 3))  # big multipliers saturate
    g.check()


def test_qconv_depthwise_path():
    g = G()
    x = g.input("x", i8(2, 4, 19, 37))
    s = g.input("s", i8(1, 3, 5, 3))
    x1 = g.input("x1", i8(1, 4, 40))
    qconv(g, "d0", x, 4, 1, (3, 3), group=4, pads=[1, 1, 1, 1], xzp=-9, yzp=4)
    qconv(g, "d1", x, 4, 1, (3, 3), group=4, pads=[1, 1, 1, 1], strides=[2, 2], xzp=127)
    qconv(g, "d2", x, 4, 1, (5, 5), group=4, pads=[2, 2, 2, 2], bias=False, xzp=-128)
    qconv(g, "d3", x, 4, 1, (5, 5), group=4, pads=[1, 2, 2, 1], strides=[2, 2], xzp=3)
    qconv(g, "d4", x, 8, 1, (3, 3), group=4, pads=[1, 1, 1, 1], xzp=-1)  # channel multiplier 2
    qconv(g, "d5", x, 4, 1, (3, 3), group=4, dilations=[2, 3], pads=[2, 3, 2, 3], xzp=60)
    qconv(g, "d6", x, 4, 1, (2, 3), group=4, strides=[3, 2], xzp=-60, y_min=-100, y_max=20)
    qconv(g, "d7", x, 4, 1, (3, 3), group=4, auto_pad="SAME_UPPER", strides=[2, 2])
    qconv(g, "d8", s, 3, 1, (3, 3), group=3, pads=[1, 1, 1, 1], xzp=2)
    qconv(g, "d9", x1, 4, 1, (5,), group=4, pads=[2, 2], xzp=-4)
    qconv(g, "d10", x, 4, 1, (3, 3), group=4, pads=[1, 1, 1, 1], rq=rq_attrs(4, -2, 2))
    g.check()


def test_qconv_extreme_accumulators():
    """Accumulators near +-2^31 (x - x_zp = -255 with weights -128) and a folded zero-point term that wraps int32."""
    g = G()
    k = 65000
    xa = g.input("xa", np.full((1, k, 1, 2), -128, I8))
    wa = g.const("wa", np.full((2, k, 1, 1), -128, I8))
    ba = g.const("ba", np.array([2**31 - 1 - 65000 * 32640, -(2**31) + 5], np.int32))
    g.node("QConv", [xa, wa, ba], "ya", x_zero_point=127, multiplier=[2**31 - 1, 2**30], shift=[-23, -10])
    k = 140000  # x_zp * sum(w) = 127 * 128 * k > 2^31: the folded bias wraps, the true sum does not
    xw = np.full((1, k, 1, 1), 127, I8)
    xw[0, RNG.integers(0, k, 300)] = i8(300, 1, 1)
    xb = g.input("xb", xw)
    wb = g.const("wb", np.where(RNG.random((3, k, 1, 1)) < 0.9, -128, 127).astype(I8))
    g.node("QConv", [xb, wb], "yb", x_zero_point=127, multiplier=[2**30] * 3, shift=[-12, -14, -16])
    g.check()


def test_qconv_results_do_not_depend_on_threads():
    g = G()
    x = g.input("x", i8(2, 16, 20, 20))
    qconv(g, "a", x, 24, 16, (3, 3), pads=[1, 1, 1, 1], xzp=-5)
    qconv(g, "b", x, 16, 1, (3, 3), group=16, pads=[1, 1, 1, 1], xzp=5)
    model, feeds = g.model(), g.feeds()
    for threads in (2, 3):
        same(g, burnedge.Session(model, backend="c", threads=threads).run(feeds))


def test_qconv_channels_last():
    """Chains of channels-last convs give the spec's bytes on any thread count; the layout choice is the intended
    one (an elementwise op ties its operands' layouts; graph outputs and other readers stay NCHW)."""
    g = nhwc_chain()
    assert nhwc_int8_tensors(g.model().graph) == {"a", "b", "c", "d", "e", "r", "t", "k"}
    for threads in (1, 3):
        g.check(threads)


def test_max_pool_between_qconvs_runs_nhwc():
    """A ResNet stem's int8 MaxPool between two QConvs follows them channels-last (be_maxpool2d_nhwc_i8), with the
    spec's bytes on any thread count; one whose output is a graph output keeps both sides NCHW."""
    g = G()
    x = g.input("x", i8(2, 3, 21, 18))
    s = qconv(g, "s", x, 16, 3, (3, 3), pads=[1, 1, 1, 1], xzp=-5, yzp=3, output=False)
    p = g.node("MaxPool", [s], "p", domain="", output=False, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    qconv(g, "c", p, 8, 16, (3, 3), pads=[1, 1, 1, 1], xzp=3, yzp=-1)
    t = qconv(g, "t", x, 16, 3, (3, 3), pads=[1, 1, 1, 1], xzp=-5, yzp=3, output=False)
    g.node("MaxPool", [t], "tp", domain="", kernel_shape=[2, 3], strides=[2, 1], dilations=[1, 2], ceil_mode=1)
    assert nhwc_int8_tensors(g.model().graph) == {"s", "p"}
    src = prepare(g.model().graph)[1].source
    assert src.count("be_maxpool2d_nhwc_i8(") == 1 and src.count("be_maxpool2d_i8(") == 1, src
    for threads in (1, 2):
        g.check(threads)


def test_banded_copies_split_over_threads():
    """Band copies of 32 KiB and more are made on the conv's threads (pad_copy_par): the same bytes on 1 and 2
    threads, several bands per image, an NCHW stem and an NHWC input."""
    g = G()
    x = g.input("x", i8(2, 3, 150, 140))
    s = qconv(g, "s", x, 64, 3, (3, 3), pads=[1, 1, 1, 1], strides=[2, 2], xzp=-4, yzp=2, output=False)
    qconv(g, "c", s, 16, 64, (3, 3), pads=[1, 1, 1, 1], xzp=2, yzp=-3)
    assert "s" in nhwc_int8_tensors(g.model().graph)
    for threads in (1, 2):
        g.check(threads)


def test_stems_narrow_tiles_and_depthwise_rows():
    g = stem_chain()
    assert {f"s{c}" for c in range(1, 6)} | {f"d{c}" for c in range(1, 6)} <= nhwc_int8_tensors(g.model().graph)
    for threads in (1, 2):
        g.check(threads)


def test_nhwc_layout_is_dropped_for_other_readers():
    """A tensor some NCHW-only op reads stays NCHW, and so do the operands of the elementwise op it comes from."""
    g = G()
    x = g.input("x", i8(1, 4, 6, 6))
    a = qconv(g, "a", x, 8, 4, (1, 1), output=False)
    b = qconv(g, "b", x, 8, 4, (3, 3), pads=[1, 1, 1, 1], output=False)
    r = g.node("QAdd", [a, b], "r", output=False, **add_attrs(32))
    g.node("MaxPool", [r], "mp", domain="", kernel_shape=[2, 2])
    c = qconv(g, "c", x, 8, 4, (1, 1), output=False)
    qconv(g, "d", c, 8, 1, (3, 3), group=8, pads=[1, 1, 1, 1])
    assert nhwc_int8_tensors(g.model().graph) == {"c"}
    g.check()


# -- QMatMul --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,k,n", [((1, 7), 7, 5), ((13, 33), 33, 40), ((2, 3, 64), 64, 17), ((6, 16), 16, 16)])
def test_qmatmul(shape, k, n):
    g = G()
    a = g.input("a", i8(*shape))
    b = g.const("b", i8(k, n, lo=-127))
    bias = g.const("bias", RNG.integers(-(2**20), 2**20, n).astype(np.int32))
    g.node("QMatMul", [a, b, bias], "y", a_zero_point=-17, y_zero_point=9, **rq_attrs(n))
    g.node("QMatMul", [a, b], "y2", a_zero_point=127, **rq_attrs(n, -3, 1), y_min=-20, y_max=90)
    g.check()


def test_qmatmul_large_accumulators_and_threads():
    g = G()
    k = 60000
    a = g.input("a", np.where(RNG.random((3, k)) < 0.97, -128, 127).astype(I8))
    b = g.const("b", np.full((k, 20), -128, I8))
    g.node("QMatMul", [a, b], "y", a_zero_point=127, multiplier=np.full(20, 2**31 - 1, np.int32),
           shift=np.arange(-30, -10, dtype=np.int32))  # fmt: skip
    g.check()
    g2 = G()
    a = g2.input("a", i8(37, 100))
    g2.node("QMatMul", [a, g2.const("b", i8(100, 70))], "y", a_zero_point=3, **rq_attrs(70))
    g2.check(threads=3)
