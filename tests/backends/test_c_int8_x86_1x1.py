"""The x86 channels-last 1x1 convs at each ISA level, byte for byte against the int8 spec: on AVX-512 VNNI
(x86-64-v4) a 1x1 conv read in place with K <= 160 (or M <= 96 and K <= 384) and an NHWC output takes
x86/qconv_nhwc.c's own path (activations flipped to the unsigned side, weight quads in registers up to K = 32, else
from L1, 8 pixels per step); the AVX2 and AVX-VNNI builds run the same graphs on the GEMM.

Shapes reach every branch: K = 1..32 (whole quads, quad tails of 1-3 bytes, odd pair rows: K % 4 in 1, 2, 3), K = 33
..384 (weight quads from L1, jobs of fewer pixels), K and M past the path (the GEMM again), output channels 1..96
(masked column tails, one to six 16-column panels), pixel counts that leave tails of 1-7 pixels in the last 8 and
jobs with a partial last one, two images, no bias, a clipped output, full-range weights, shifts all in the short
form and mixed ones (s below 33 in some channel: the GEMM), one and two threads. Convs of K <= 32 that are not
read in place (stems on NCHW inputs, strided 1x1 on NHWC rows) take the same path on im2col rows gathered from the
GEMM's padded band copy: pads, strides, dilation, several bands, K = 36 back on the GEMM."""

from __future__ import annotations

import pytest

from tests.backends.int8_graphs import G, i8, qconv, rq_attrs, same
from tests.backends.test_c_int8_x86 import LEVELS, _run, _toolchain

# (K, M, H, W, images)
CASES = [
    (16, 96, 11, 13, 2),  # MobileNet's expansion: 286 pixels (4 jobs + 30), 6 whole panels
    (1, 7, 3, 5, 1),  # one input channel, 15 pixels (8 + 7), a masked panel
    (3, 20, 9, 7, 1),  # K % 4 == 3, one panel + 4 columns
    (5, 33, 5, 5, 2),  # odd pair row, quad tail of 1
    (8, 16, 8, 8, 1),  # 64 pixels: one whole job
    (13, 40, 13, 5, 1),  # 65 pixels: a job of 1
    (24, 17, 6, 11, 2),  # mixed s: the GEMM
    (31, 9, 7, 3, 1),  # K % 4 == 3, odd last pair row
    (32, 64, 10, 10, 1),  # the widest K with its quads in registers (8)
    (33, 24, 6, 6, 1),  # weight quads from L1 (K > 32), an odd pair row, two panels (16 + 8)
    (40, 50, 9, 7, 1),  # two pairs of panels, the last of 16 + 2 columns
    (100, 40, 11, 13, 2),  # a pair of panels, then one of 8 alone
    (160, 112, 5, 6, 1),  # K = 160: any M (three pairs and one panel alone)
    (200, 96, 4, 5, 1),  # K > 160 and M <= 96
    (384, 20, 7, 9, 1),  # the widest K of the path: jobs of 40 pixels (40 + 23)
    (161, 97, 5, 5, 1),  # K > 160 and M > 96: the GEMM
    (388, 16, 4, 4, 1),  # K > 384: the GEMM
]


def _graph() -> G:
    g = G()
    for i, (k, m, h, w, n) in enumerate(CASES):
        x = g.input(f"x{i}", i8(n, 3, h, w))
        a = qconv(g, f"a{i}", x, k, 3, (3, 3), pads=[1, 1, 1, 1], xzp=-3, yzp=4, output=False)  # NCHW -> NHWC
        rq = rq_attrs(m, lo=-4, hi=1) if i in (6, 16) else rq_attrs(m)  # mixed s: the GEMM's general rule
        clip = {"y_min": -60, "y_max": 70} if i % 3 == 1 else {}
        p = qconv(g, f"p{i}", a, m, k, (1, 1), bias=i % 5 != 2, xzp=4, yzp=-2, rq=rq, output=False, **clip)
        qconv(g, f"d{i}", p, m, 1, (3, 3), group=m, pads=[1, 1, 1, 1], xzp=-2, yzp=1)  # NHWC in, NCHW out
    return g


# im2col convs of K <= 32 with an NHWC output (rows gathered from the padded band copy): (C, M, H, W, kernel,
# strides, pads, dilations, NHWC input)
STEMS = [
    (3, 32, 15, 17, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False),  # MobileNet's stem, K = 27
    (1, 8, 13, 11, (5, 5), (2, 2), (2, 1, 0, 2), (1, 1), False),  # K = 25, asymmetric pads
    (2, 24, 9, 10, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), False),  # dilated, K = 18
    (3, 17, 7, 12, (1, 3), (1, 2), (0, 1, 0, 1), (1, 1), False),  # K = 9, a column tail
    (3, 16, 80, 600, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False),  # wide rows: several bands of the copy
    (20, 9, 9, 8, (1, 1), (2, 2), (0, 0, 0, 0), (1, 1), True),  # strided 1x1 on NHWC rows: gathered, K = 20
    (4, 40, 8, 9, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), True),  # K = 36: the GEMM
]


def _stems() -> G:
    g = G()
    for i, (c, m, h, w, k, s, p, d, nhwc) in enumerate(STEMS):
        x = g.input(f"sx{i}", i8(1 + i % 2, c, h, w))
        if nhwc:  # channels-last rows from a 1x1 conv before it
            x = qconv(g, f"sa{i}", x, c, c, (1, 1), xzp=2, yzp=-5, output=False)
        y = qconv(g, f"s{i}", x, m, c, k, strides=list(s), pads=list(p), dilations=list(d), xzp=-5 if nhwc else 7,
                  yzp=3, output=False, bias=i != 2)  # fmt: skip
        qconv(g, f"sd{i}", y, m, 1, (3, 3), group=m, pads=[1, 1, 1, 1], xzp=3, yzp=-1)  # NHWC in, NCHW out
    return g


@pytest.mark.parametrize("level", list(LEVELS))
def test_small_k_1x1_convs_at_each_x86_level(level, tmp_path):
    tc, folder = _toolchain(level, tmp_path)
    for g in (_graph(), _stems()):
        for threads in (1, 2):
            same(g, _run(g, tc, folder, threads))
