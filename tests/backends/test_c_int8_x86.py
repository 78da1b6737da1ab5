"""The x86 int8 kernels at each ISA level, byte for byte against the int8 spec (the numpy reference): the exact AVX2
int16-pair tile (target x86-64-v3), the AVX-VNNI ymm tile (x86-64-v3 + -mavxvnni) and the AVX-512 VNNI zmm tile
(target x86-64-v4). Each build is checked to hold the instructions of its level (objdump), then runs QMatMul, the
NCHW im2col conv, the channels-last convs and the depthwise paths on odd shapes: K not a multiple of 4 or 32, column
and row tails, 1x1 / 3x3 / strided / grouped / 1-D convs, non-zero zero points, weights at -128 and accumulators near
+-2^31. A level this CPU lacks is skipped, naming the missing features (the device host runs it: see README).

Only the int8 kernel files are compiled (q*.c and the headers: seconds, not the whole library's minute)."""

from __future__ import annotations

import platform
import shutil
import subprocess

import numpy as np
import pytest

from burnedge import host, targets
from burnedge.backends.c import build, cross
from burnedge.backends.c.emit import weights_blob
from burnedge.backends.c.runtime import CModel
from tests.backends.c_helpers import prepare, slots
from tests.backends.int8_graphs import I8, RNG, G, i8, nhwc_chain, qconv, rq_attrs, same, stem_chain

V3 = ["avx2", "fma", "bmi1", "bmi2", "f16c", "movbe"]
LEVELS = {  # name -> (extra flags over the target's, the target, features the CPU needs, what objdump must show)
    "avx2": ((), "x86-64-v3", V3, None),
    "avx_vnni": (("-mavxvnni",), "x86-64-v3", [*V3, "avx_vnni"], "{vex} vpdpbusd %ymm"),
    "avx512_vnni": ((), "x86-64-v4", [*V3, "avx512f", "avx512bw", "avx512vl", "avx512_vnni"], "vpdpbusd %zmm"),
}


def _toolchain(level: str, tmp_path) -> tuple[build.Toolchain, object]:
    """The level's toolchain and a folder of only the int8 kernels it builds; skipped where the CPU lacks the level."""
    if platform.machine() not in ("x86_64", "AMD64") or shutil.which("cc") is None:
        pytest.skip("not an x86-64 machine with a C compiler")
    extra, target, needs, _ = LEVELS[level]
    missing = sorted(set(needs) - host.features())
    if missing:
        pytest.skip(f"this CPU lacks {', '.join(missing)}: run this test on a machine with {level}")
    tc = cross.toolchain(targets.get(target))
    tc = build.Toolchain(tc.cc, (*tc.cflags, *extra), tc.ldflags, tc.ar, f"{target}-{level}", kernel_sets=tc.sets())
    folder = tmp_path / "kernels"
    folder.mkdir()
    for name, text in build.kernel_sources(tc.sets()).items():
        if name.endswith(".h") or name.startswith("q") or name == "workers.c":  # the pool the model code calls
            (folder / name).write_text(text)
    return tc, folder


def _run(g: G, tc: build.Toolchain, folder, threads: int) -> dict:
    plan, emitted = prepare(g.model().graph)
    ins, outs, consts = slots(plan)
    so = build.build_model(emitted.source, tc, folder)
    undefined = subprocess.run(["nm", "-u", str(so)], capture_output=True, text=True, check=True).stdout
    assert " be_" not in undefined, f"kernels outside q*.c needed: {undefined}"
    return CModel(so, weights_blob(emitted), ins, outs, consts, threads).run(g.feeds())


def _matmuls() -> G:
    """QMatMul: rows 1..13 (row-panel tails), K = 1, 2, 3 (the int16 tile), 5, 31, 67 (odd quads, odd pair rows),
    N = 1..40 (one or two 16-column panels and their tails); full-range weights, zero points non-zero."""
    g = G()
    for i, (rows, k, n) in enumerate(
        [(1, 1, 1), (7, 2, 9), (5, 3, 17), (6, 5, 16), (13, 31, 40), (3, 67, 33), (12, 64, 32), (2, 100, 8)]
    ):
        a = g.input(f"a{i}", i8(rows, k))
        b = g.const(f"b{i}", i8(k, n))
        bias = g.const(f"bias{i}", RNG.integers(-(2**20), 2**20, n).astype(np.int32))
        g.node("QMatMul", [a, b, bias], f"y{i}", a_zero_point=int(RNG.integers(-128, 128)), y_zero_point=5,
               **rq_attrs(n))  # fmt: skip
    k = 60000  # accumulators near -2^31: a = -128 or 127 against weights -128, a_zp folded (wrapping) into the bias
    a = g.input("ax", np.where(RNG.random((3, k)) < 0.97, -128, 127).astype(I8))
    g.node("QMatMul", [a, g.const("bx", np.full((k, 20), -128, I8))], "yx", a_zero_point=127,
           multiplier=np.full(20, 2**31 - 1, np.int32), shift=np.arange(-30, -10, dtype=np.int32))  # fmt: skip
    return g


def _convs() -> G:
    """QConv between NCHW tensors (im2col + GEMM, the VNNI quad panels): K = 45, 17, 30, 28, 36; 3x3, 1x1 direct and
    strided, grouped, dilated, 1-D, depthwise; full-range weights; an accumulator near -2^31 whose folded bias wraps."""
    g = G()
    x = g.input("x", i8(2, 5, 13, 11))
    x1 = g.input("x1", i8(1, 7, 23))
    x2 = g.input("x2", i8(1, 17, 9, 10))
    x3 = g.input("x3", i8(1, 8, 7, 12))
    x4 = g.input("x4", i8(2, 3, 15, 14))
    x5 = g.input("x5", i8(1, 28, 6, 9))

    def conv(name, inp, m, cg, k, **attrs):
        w = g.const(f"{name}_w", i8(m, cg, *k))
        b = g.const(f"{name}_b", RNG.integers(-30000, 30000, m).astype(np.int32))
        g.node("QConv", [inp, w, b], name, **rq_attrs(m), **attrs)

    conv("c0", x, 10, 5, (3, 3), pads=[1, 1, 1, 1], x_zero_point=-7, y_zero_point=3)
    conv("c1", x, 19, 5, (3, 3), pads=[0, 2, 1, 0], strides=[2, 2], x_zero_point=100, y_zero_point=-20)
    conv("c2", x2, 7, 17, (1, 1), x_zero_point=5)  # direct 1x1, K = 17, 90 columns: a partial panel
    conv("c3", x2, 33, 17, (1, 1), strides=[2, 2], x_zero_point=-128, y_min=0, y_max=100)
    conv("c4", x3, 6, 4, (3, 3), group=2, pads=[1, 1, 1, 1], x_zero_point=9)  # per group: K = 36
    conv("c5", x3, 16, 1, (3, 3), group=8, pads=[1, 1, 1, 1], x_zero_point=-9)  # depthwise, multiplier 2
    conv("c6", x, 6, 5, (3, 2), dilations=[2, 1], pads=[2, 1, 2, 1], x_zero_point=1)
    conv("c7", x1, 9, 7, (4,), pads=[1, 2], strides=[2], x_zero_point=11)
    conv("c9", x4, 20, 3, (7, 7), pads=[3, 3, 3, 3], strides=[2, 2], x_zero_point=-20)  # a stem: channels-last rows
    qconv(g, "c8", x3, 8, 1, (3, 3), group=8, pads=[1, 1, 1, 1], strides=[2, 2], xzp=-50, yzp=50)  # depthwise
    # channels-last depthwise 3x3 of 28 channels (16 + a masked 12 on AVX-512), NCHW out and NHWC into a 1x1 conv
    qconv(g, "d0", x5, 28, 1, (3, 3), group=28, pads=[1, 1, 1, 1], xzp=3, yzp=-4)
    d1 = qconv(g, "d1", x5, 28, 1, (3, 3), group=28, pads=[1, 1, 1, 1], xzp=-3, output=False)
    qconv(g, "p1", d1, 40, 28, (1, 1), xzp=7)
    k = 65000
    xa = g.input("xa", np.full((1, k, 1, 2), -128, I8))
    wa = g.const("wa", np.full((2, k, 1, 1), -128, I8))
    ba = g.const("ba", np.array([2**31 - 1 - 65000 * 32640, -(2**31) + 5], np.int32))
    g.node("QConv", [xa, wa, ba], "ya", x_zero_point=127, multiplier=[2**31 - 1, 2**30], shift=[-23, -10])
    return g


@pytest.mark.parametrize("level", list(LEVELS))
def test_int8_kernels_at_each_x86_level(level, tmp_path):
    tc, folder = _toolchain(level, tmp_path)
    want = LEVELS[level][3]
    lib = build.kernel_library(tc, folder)
    if shutil.which("objdump"):
        asm = subprocess.run(["objdump", "-d", str(lib)], capture_output=True, text=True, check=True).stdout
        assert (want in asm) if want else ("vpdpbusd" not in asm), f"{level}: the build lacks {want or 'AVX2 only'}"
    for g in (_matmuls(), _convs(), nhwc_chain(), stem_chain()):
        for threads in (1, 2):
            same(g, _run(g, tc, folder, threads))
