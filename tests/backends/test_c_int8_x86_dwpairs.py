"""The x86 AVX-512 depthwise 3x3 path on int16 pairs (x86/qconv_dw_nhwc.c: a ring of horizontally paired input
pixels, vpdpwssd, x_zp * sum(w) taken out of the bias), byte for byte against the int8 spec at each ISA level (the
AVX2 build runs the same graphs on its float path).

Shapes reach every branch of the pairing: strides 1 and 2 across (and 2 x 1, 1 x 2 with different row strides),
symmetric, one-sided and no padding (rows wholly outside the image, pairs with one or both pixels in the padding, the
last pair reaching past the padded row), widths 1..19 (8-pixel blocks, tails of 1-7, planes narrower than a block),
16..96 channels (C % 16 == 0; 24 channels stay on the float path), extreme zero points, no bias, NCHW and NHWC
outputs, two images, one and two threads."""

from __future__ import annotations

import pytest

from tests.backends.int8_graphs import G, i8, qconv, rq_attrs, same
from tests.backends.test_c_int8_x86 import LEVELS, _run, _toolchain

# (channels, H, W, strides, pads, x_zp)
CASES = [
    (16, 9, 19, (1, 1), (1, 1, 1, 1), -128),  # 2 blocks of 8 + a tail of 3
    (32, 6, 5, (2, 2), (1, 1, 1, 1), 127),  # s2, odd width: the last pair's second pixel in the padding
    (48, 8, 8, (2, 2), (0, 1, 1, 0), 5),  # one-sided pads, even width
    (16, 5, 1, (1, 1), (1, 1, 1, 1), -3),  # one pixel wide: every pair touches the padding
    (32, 4, 2, (2, 2), (1, 1, 1, 1), 0),  # two pixels, s2
    (64, 7, 12, (2, 1), (1, 0, 1, 2), 9),  # row stride 2, column stride 1, asymmetric
    (16, 11, 13, (1, 2), (2, 1, 0, 1), -77),  # row stride 1, column stride 2
    (96, 3, 3, (1, 1), (0, 0, 0, 0), 33),  # valid: one output pixel
    (24, 6, 7, (1, 1), (1, 1, 1, 1), 4),  # C % 16 == 8: the float path
]


def _graph() -> G:
    g = G()
    for i, (c, h, w, s, p, zp) in enumerate(CASES):
        x = g.input(f"x{i}", i8(2, 3, h, w))
        a = qconv(g, f"a{i}", x, c, 3, (1, 1), xzp=-3, yzp=zp, output=False)  # NCHW -> NHWC, its zero point
        rq = rq_attrs(c, lo=-4, hi=1) if i % 3 == 2 else rq_attrs(c)  # s below 33 in some channel: the general rule
        clip = {"y_min": -40, "y_max": 80} if i % 2 else {}
        b = qconv(g, f"b{i}", a, c, 1, (3, 3), group=c, pads=list(p), strides=list(s), bias=i % 4 != 1, xzp=zp,
                  yzp=-2, rq=rq, output=False, **clip)  # fmt: skip
        qconv(g, f"c{i}", b, 5, c, (1, 1), xzp=-2, yzp=1)  # NHWC in, NCHW out
        qconv(g, f"d{i}", a, c, 1, (3, 3), group=c, pads=list(p), strides=list(s), xzp=zp, yzp=3)  # NCHW out
    return g


@pytest.mark.parametrize("level", list(LEVELS))
def test_depthwise_int16_pairs_at_each_x86_level(level, tmp_path):
    tc, folder = _toolchain(level, tmp_path)
    g = _graph()
    for threads in (1, 2):
        same(g, _run(g, tc, folder, threads))
