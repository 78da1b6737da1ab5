"""The x86 int8 depthwise kernel and the requantising epilogues at each ISA level, byte for byte against the int8
spec (the numpy reference, which the portable C matches bit for bit): on AVX-512 (x86-64-v4) the channels-last
depthwise convs run on the row ring with 16 channels per zmm (3x3 and 5x5 of stride 1 and 2 unrolled, any other
kernel, stride or dilation generic), and the GEMM tile epilogues take the short form of the rule where every lane
has s >= 33; the AVX2 build (x86-64-v3) runs the same graphs on its 8-lane paths.

Shapes reach every branch: 3x3 / 5x5 / 7x7 / 3x1 / 1x1 kernels, strides 1 and 2 (and 2 x 1), dilation 2, symmetric,
asymmetric and no padding, channel counts with a masked last 8 (C8 % 16 == 8) and partial channel tails (C % 8 != 0),
widths with 8-pixel blocks and a tail, a stride larger than the ring (1x1 stride 2), NHWC and NCHW inputs and
outputs, two images, one and two threads; shifts that give s below, at and above 32 and 33 in one 16-channel block
(the general rule) and blocks with s >= 33 only (the short form)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.backends.int8_graphs import RNG, G, i8, qconv, rq_attrs, same
from tests.backends.test_c_int8_x86 import LEVELS, _run, _toolchain


def _mixed(n: int) -> dict:
    """Per-channel parameters whose s = 31 - shift falls on both sides of 32 and 33 (the rule's general form)."""
    return rq_attrs(n, lo=-4, hi=1)


# (channels, H, W, kernel, strides, pads, dilations)
DW_CASES = [
    (32, 9, 13, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),  # 3x3 s1: 8-pixel block + 5 tail, two whole blocks
    (24, 15, 17, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),  # 3x3 s2: 16 + a masked 8
    (20, 11, 10, (5, 5), (1, 1), (2, 2, 2, 2), (1, 1)),  # 5x5 s1: C8 = 24, 4 channels of the last block stored
    (13, 12, 19, (5, 5), (2, 2), (2, 2, 2, 2), (1, 1)),  # 5x5 s2: one block of 13 (C8 = 16)
    (40, 9, 9, (7, 7), (1, 1), (3, 3, 3, 3), (1, 1)),  # 7x7: the generic row
    (17, 14, 15, (7, 7), (2, 2), (3, 3, 3, 3), (1, 1)),  # 7x7 s2: 16 + 1 channel
    (16, 10, 12, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2)),  # dilated: generic
    (9, 13, 11, (3, 1), (2, 1), (0, 1, 2, 0), (1, 1)),  # 3x1, stride 2 x 1, asymmetric pads
    (48, 7, 9, (1, 1), (2, 2), (0, 0, 0, 0), (1, 1)),  # 1x1 stride 2: rows the ring skips
    (64, 12, 12, (3, 3), (2, 2), (0, 0, 0, 0), (1, 1)),  # valid s2: the last input column unread
    (30, 8, 21, (3, 3), (1, 1), (0, 1, 1, 0), (1, 1)),  # one-sided pads, 2 blocks of 8 + 5
]


def _dw_graph() -> G:
    g = G()
    for i, (c, h, w, k, s, p, d) in enumerate(DW_CASES):
        x = g.input(f"x{i}", i8(2, 5, h, w))
        rq = _mixed(c) if i % 2 else rq_attrs(c)
        a = qconv(g, f"a{i}", x, c, 5, (1, 1), xzp=-3, yzp=4, output=False)  # NCHW -> channels-last
        b = qconv(g, f"b{i}", a, c, 1, k, group=c, pads=list(p), strides=list(s), dilations=list(d), xzp=4, yzp=-2,
                  rq=rq, output=False)  # fmt: skip
        qconv(g, f"c{i}", b, 6, c, (1, 1), xzp=-2, yzp=1)  # NHWC -> NCHW through the GEMM
        qconv(g, f"d{i}", a, c, 1, k, group=c, pads=list(p), strides=list(s), dilations=list(d), xzp=4,
              rq=_mixed(c), bias=i % 3 != 0, y_min=-50, y_max=90)  # fmt: skip  NHWC in, NCHW graph output
    # NCHW in and out (a small plane: the channels-last kernel between NCHW tensors), 28 and 12 channels
    x = g.input("xn", i8(1, 28, 6, 9))
    qconv(g, "n0", x, 28, 1, (3, 3), group=28, pads=[1, 1, 1, 1], strides=[2, 2], xzp=3, yzp=-4, rq=_mixed(28))
    qconv(g, "n1", x, 28, 1, (5, 5), group=28, pads=[2, 2, 2, 2], xzp=-3)
    x1 = g.input("x1d", i8(1, 12, 31))  # 1-D, channels-last after a conv
    k = qconv(g, "k", x1, 12, 12, (3,), pads=[1, 1], xzp=9, output=False)
    qconv(g, "l", k, 12, 1, (5,), group=12, pads=[2, 2], strides=[2], xzp=-1, rq=_mixed(12))
    return g


def _epilogue_graph() -> G:
    """The VNNI tile epilogues with s on both sides of 33: QMatMul (per column: rows 1..13, columns 1..40) and
    NCHW convs (per row: channels 1..19), and channels-last 1x1 convs (per column)."""
    g = G()
    for i, (rows, kk, n) in enumerate([(1, 4, 1), (7, 24, 9), (5, 16, 17), (6, 33, 16), (13, 31, 40), (4, 64, 32)]):
        a = g.input(f"ma{i}", i8(rows, kk))
        b = g.const(f"mb{i}", i8(kk, n))
        bias = g.const(f"mbias{i}", RNG.integers(-(2**20), 2**20, n).astype(np.int32))
        g.node("QMatMul", [a, b, bias], f"my{i}", a_zero_point=0, y_zero_point=-3, **_mixed(n))
    x = g.input("cx", i8(1, 7, 9, 8))
    for i, m in enumerate((1, 5, 6, 19)):
        qconv(g, f"cv{i}", x, m, 7, (3, 3), pads=[1, 1, 1, 1], xzp=2, yzp=3, rq=_mixed(m))
    x2 = g.input("px", i8(1, 24, 7, 11))
    p = qconv(g, "p0", x2, 40, 24, (1, 1), xzp=1, rq=_mixed(40), output=False)  # K = 24: a quad tail of 8
    qconv(g, "p1", p, 21, 40, (1, 1), xzp=-5, rq=_mixed(21), yzp=7)
    return g


@pytest.mark.parametrize("level", list(LEVELS))
def test_depthwise_and_epilogues_at_each_x86_level(level, tmp_path):
    tc, folder = _toolchain(level, tmp_path)
    for g in (_dw_graph(), _epilogue_graph()):
        for threads in (1, 2):
            same(g, _run(g, tc, folder, threads))
