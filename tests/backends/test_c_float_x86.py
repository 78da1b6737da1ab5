"""The x86 float kernels' AVX-512F path (BE_ISA_X86_AVX512F: x86_zmm.h, x86_zmm_conv.h, x86_zmm_dw.h) against the
numpy reference: the GEMM's two-panel 6x32 tile (row, column and K tails, a runtime B, every epilogue), the NHWC
conv's 8x32 / 8x16 tiles (channel and pixel tails, 1x1 read in place, strides, NCHW outputs, every epilogue),
channels-last depthwise on 16 channels (channel tails, strides, dilation, padding, the in-place strided path) and
the Winograd product.
On a machine without AVX-512 the same cases run the AVX2 code (still checked); the test that the zmm code is
really compiled and taken is skipped there, with the reason."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge import host
from burnedge.backends.c import build

RNG = np.random.default_rng(16)
N = helper.make_node
ACTS = [("", []), ("Relu", []), ("Clip", [0.0, 6.0]), ("LeakyRelu", [0.1]), ("HardSigmoid", [0.2, 0.5]),
        ("HardSwish", []), ("Sigmoid", []), ("Tanh", []), ("Gelu", [])]  # fmt: skip
AVX512 = {"avx512f", "avx512bw", "avx512vl", "avx512dq"}
HAS_AVX512 = host.machine() in ("x86_64", "AMD64") and AVX512 <= host.features()
ISA_H = Path(build.KERNEL_DIR) / "reference" / "isa.h"


def _rand(*shape, scale=1.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def _act(act: str, params) -> dict:
    return {"activation": act, **({"activation_params": list(params)} if params else {})} if act else {}


def _check(nodes, feeds: dict, outs: list[str], inits: dict, threads: int = 1) -> None:
    vi = helper.make_tensor_value_info
    ins = [vi(k, TensorProto.FLOAT, v.shape) for k, v in feeds.items()]
    o = [vi(k, TensorProto.UNDEFINED, None) for k in outs]
    g = helper.make_graph(nodes, "g", ins, o, [numpy_helper.from_array(a, n) for n, a in inits.items()])
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("burnedge", 1)]
    model = burnedge.load(helper.make_model(g, opset_imports=opsets))
    want = burnedge.Session(model).run(feeds)
    got = burnedge.Session(model, backend="c", threads=threads).run(feeds)
    for k in outs:
        w, c = want[k], got[k]
        assert c.shape == w.shape, (k, c.shape, w.shape)
        err = float(np.abs(w.astype(np.float64) - c).max()) / max(float(np.abs(w).max()), 1e-30)
        assert err <= 1e-5, (k, err)  # the C backend's fp32 tolerance (test_c_dense.py)


def _fconv(name, x, w, b="", res="", act="", params=(), **attrs):
    ins = [x, w, b, res] if res else [x, w, b] if b else [x, w]
    return N("FusedConv", ins, [name], domain="burnedge", **_act(act, params), **attrs)


# -- the path: which builds define BE_ISA_X86_AVX512F, and the host library's zmm code --------------------------
def _isa_macros(march: str) -> set[str]:
    proc = subprocess.run(["cc", f"-march={march}", "-dM", "-E", "-x", "c", str(ISA_H)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return {line.split()[1] for line in proc.stdout.splitlines() if line.startswith("#define BE_ISA")}


@pytest.mark.skipif(shutil.which("cc") is None or host.machine() != "x86_64", reason="needs an x86-64 cc")
def test_isa_h_enables_avx512f_for_v4_and_not_v3():
    assert "BE_ISA_X86_AVX512F" not in _isa_macros("x86-64-v3")
    assert {"BE_ISA_X86_AVX2", "BE_ISA_X86_AVX512F"} <= _isa_macros("x86-64-v4")
    assert "BE_ISA_X86_AVX512F" not in _isa_macros("haswell")


@pytest.mark.skipif(not HAS_AVX512, reason="this CPU has no AVX-512 F/BW/VL/DQ: the x86 set runs its AVX2 tiles")
@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs objdump (binutils)")
def test_host_library_takes_the_zmm_path(tmp_path):
    tc = build.host_toolchain()
    assert "x86" in tc.sets()
    lib = build.kernel_library(tc)
    members = ["gemm.o", "conv_nhwc.o", "conv_dw_nhwc.o", "conv_wino.o"]
    subprocess.run(["ar", "x", str(lib), *members], cwd=tmp_path, check=True)
    for m in members:
        asm = subprocess.run(["objdump", "-d", m], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
        fmas = [line for line in asm.splitlines() if "vfmadd" in line and "%zmm" in line]
        assert len(fmas) >= 6, f"{m}: no zmm FMAs: the AVX-512F tiles were not compiled"
    syms = subprocess.run(["nm", "conv_nhwc.o"], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert "zmm_tile" in syms


# -- GEMM: 6x32 pairs of panels, the odd panel, 1-row and <= 3-row panels, K tails ---------------------------------
@pytest.mark.parametrize(
    "m,k,n",
    [(6, 17, 32), (13, 3, 64), (7, 130, 40), (32, 512, 48), (2, 33, 100), (1, 20, 70), (4, 1, 33), (3, 257, 96)],
)
def test_gemm_tiles(m, k, n):
    feeds = {"a": _rand(m, k), "ra": _rand(m, n), "bt": _rand(k, n)}
    inits = {"w": _rand(k, n, scale=0.3), "b": _rand(n), "wt": _rand(n, k, scale=0.3)}
    nodes = [
        N("MatMul", ["a", "w"], ["y0"]),  # constant B: packed panels
        N("MatMul", ["a", "bt"], ["y1"]),  # runtime row-major B: read in place, a partial last panel copied
        N("Gemm", ["a", "wt", "b"], ["y2"], transB=1, alpha=0.5, beta=2.0),
        N("FusedMatMul", ["a", "w", "b", "ra"], ["y3"], domain="burnedge", activation="Relu"),
    ]
    _check(nodes, feeds, ["y0", "y1", "y2", "y3"], inits)


def test_gemm_runtime_b_transposed():
    feeds = {"a": _rand(11, 70), "bt": _rand(45, 70)}
    _check([N("Gemm", ["a", "bt"], ["y"], transB=1)], feeds, ["y"], {})


@pytest.mark.parametrize("act,params", ACTS)
def test_gemm_epilogues(act, params):
    feeds = {"a": _rand(9, 24), "r": _rand(9, 37), "x": _rand(2, 5, 24), "rx": _rand(2, 5, 37)}
    inits = {"w": _rand(37, 24, scale=0.4), "b": _rand(37), "wm": _rand(24, 37, scale=0.4), "bc": _rand(9, 1)}
    kw = {"domain": "burnedge", **_act(act, params)}
    nodes = [
        N("FusedGemm", ["a", "w", "b", "r"], ["g"], transB=1, alpha=0.5, **kw),
        N("FusedGemm", ["a", "w", "bc"], ["gc"], transB=1, **kw),  # a per-row bias: the strided operand
        N("FusedMatMul", ["x", "wm", "b", "rx"], ["m"], **kw),
    ]
    _check(nodes, feeds, ["g", "gc", "m"], inits)


@pytest.mark.parametrize("threads", [1, 2])
def test_gemm_threads(threads):
    feeds = {"a": _rand(40, 96)}
    _check([N("MatMul", ["a", "w"], ["y"])], feeds, ["y"], {"w": _rand(96, 200, scale=0.2)}, threads=threads)


# -- NHWC conv: 8x32 / 8x16 tiles ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "c,m,hw,stride,batch",
    [(16, 32, (8, 8), 1, 1), (8, 40, (5, 5), 1, 2), (12, 48, (7, 7), 2, 1), (24, 16, (9, 6), 1, 1),
     (5, 72, (3, 3), 1, 2), (16, 40, (5, 4), 1, 1), (32, 100, (12, 10), 2, 1), (16, 8, (6, 6), 1, 1)],
)  # fmt: skip
def test_nhwc_conv_tiles(c, m, hw, stride, batch):
    """3x3 (pixels at koff), 1x1 read in place (MODE 2) and strided (MODE 1 on one output row), NHWC and NCHW
    outputs, an NHWC residual: pairs of panels, the odd panel, partial channel panels, last panels of 1-2, 3-4 and
    5-7 pixels."""
    feeds = {"x": _rand(batch, c, *hw)}
    inits = {"wi": _rand(c, c, 1, 1, scale=0.3), "w3": _rand(m, c, 3, 3, scale=0.1), "b3": _rand(m),
             "w1": _rand(m, m, 1, 1, scale=0.2), "b1": _rand(m), "ws": _rand(m, m, 1, 1, scale=0.2),
             "wo": _rand(m, m, 3, 3, scale=0.05)}  # fmt: skip
    nodes = [
        _fconv("xi", "x", "wi", ""),  # NHWC for what follows
        _fconv("a", "xi", "w3", "b3", pads=[1, 1, 1, 1], act="Relu"),
        _fconv("p", "a", "w1", "b1", res="a", act="Clip", params=(-1.0, 2.0)),
        _fconv("s", "p", "ws", "", strides=[stride, stride]),
        _fconv("y", "s", "wo", "b1", pads=[1, 1, 1, 1]),  # an NCHW graph output: the 8x16 tile and its buffer
    ]
    _check(nodes, feeds, ["y"], inits)
    if batch > 1:
        _check(nodes, feeds, ["y"], inits, threads=2)


@pytest.mark.parametrize("hw", [(2, 5), (3, 9), (3, 7), (5, 3), (1, 1)])  # last panels of 2, 3, 5, 7 and 1 pixels
def test_nhwc_conv_pixel_tails(hw):
    feeds = {"x": _rand(2, 8, *hw)}
    inits = {"wi": _rand(8, 8, 1, 1, scale=0.3), "w3": _rand(40, 8, 3, 3, scale=0.2), "b3": _rand(40),
             "w1": _rand(56, 40, 1, 1, scale=0.2), "wo": _rand(3, 56, 1, 1, scale=0.3)}  # fmt: skip
    nodes = [
        _fconv("xi", "x", "wi", ""),
        _fconv("a", "xi", "w3", "b3", pads=[1, 1, 1, 1], act="Relu"),
        _fconv("p", "a", "w1", "", act="HardSigmoid", params=(0.2, 0.5)),
        _fconv("y", "p", "wo", ""),
    ]
    _check(nodes, feeds, ["y"], inits)


@pytest.mark.parametrize("act,params", ACTS)
def test_nhwc_conv_epilogues(act, params):
    feeds = {"x": _rand(1, 8, 6, 7)}
    inits = {"wi": _rand(8, 8, 1, 1, scale=0.3), "w3": _rand(40, 8, 3, 3, scale=0.2), "b3": _rand(40),
             "w1": _rand(40, 40, 1, 1, scale=0.2), "wo": _rand(3, 40, 1, 1, scale=0.3)}  # fmt: skip
    nodes = [
        _fconv("xi", "x", "wi", ""),
        _fconv("a", "xi", "w3", "b3", pads=[1, 1, 1, 1], act=act, params=params),
        _fconv("p", "a", "w1", "b3", res="a", act=act, params=params),
        _fconv("y", "p", "wo", ""),
    ]
    _check(nodes, feeds, ["y"], inits)


# -- channels-last depthwise on 16 channels -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "c,hw,k,stride,dil,pads",
    [(16, (9, 9), 3, 1, 1, [1, 1, 1, 1]), (20, (7, 11), 3, 1, 1, [1, 1, 1, 1]), (40, (6, 3), 3, 1, 1, [1, 1, 1, 1]),
     (33, (10, 8), 3, 2, 1, [1, 1, 1, 1]), (24, (12, 12), 5, 1, 1, [2, 1, 0, 2]), (48, (9, 10), 3, 1, 2, [2, 2, 2, 2]),
     (17, (8, 8), 5, 2, 1, [2, 2, 2, 2]), (32, (5, 5), 3, 1, 1, [0, 0, 0, 0])],
)  # fmt: skip
def test_depthwise_band(c, hw, k, stride, dil, pads):
    """the padded band: rows3x3 (3x3 stride 1), 9 taps in registers, any taps; blocks of 16 channels, the 8-channel
    rest, tails masked to C; an NCHW output and an NHWC one"""
    feeds = {"x": _rand(1, c, *hw)}
    inits = {"wi": _rand(c, c, 1, 1, scale=0.3), "wd": _rand(c, 1, k, k, scale=0.4), "bd": _rand(c),
             "wo": _rand(c, c, 1, 1, scale=0.3)}  # fmt: skip
    attrs = {"pads": pads, "group": c, "strides": [stride, stride], "dilations": [dil, dil]}
    nodes = [
        _fconv("xi", "x", "wi", ""),
        _fconv("d", "xi", "wd", "bd", act="Clip", params=(0.0, 6.0), **attrs),
        _fconv("e", "d", "wd", "", res="d", act="HardSwish", pads=[(k - 1) // 2] * 4, group=c),
        _fconv("y", "e", "wo", ""),
        _fconv("dn", "xi", "wd", "bd", act="Relu", **attrs),  # a graph output: NCHW through the block buffer
    ]
    _check(nodes, feeds, ["y", "dn"], inits)


@pytest.mark.parametrize(
    "c,hw,k,dil,act,params",
    [(48, (28, 28), 3, 1, "Relu", ()), (40, (30, 29), 3, 1, "Clip", (0.0, 6.0)), (32, (32, 28), 5, 1, "", ()),
     (16, (28, 30), 3, 2, "Sigmoid", ()), (64, (28, 28), 3, 1, "HardSwish", ())],
)  # fmt: skip
def test_depthwise_strided_in_place(c, hw, k, dil, act, params):
    """band_direct (stride 2, C % 8 == 0, 28x28 and up): 16-channel blocks read in place, then the 8-channel rest"""
    feeds = {"x": _rand(1, c, *hw)}
    inits = {"wi": _rand(c, c, 1, 1, scale=0.3), "wd": _rand(c, 1, k, k, scale=0.4), "bd": _rand(c),
             "wo": _rand(c, c, 1, 1, scale=0.3)}  # fmt: skip
    p = (k - 1) // 2 * dil
    nodes = [
        _fconv("xi", "x", "wi", ""),
        _fconv(
            "d", "xi", "wd", "bd", act=act, params=params, pads=[p] * 4, group=c, strides=[2, 2], dilations=[dil] * 2
        ),
        _fconv("y", "d", "wo", ""),
    ]
    _check(nodes, feeds, ["y"], inits)


# -- Winograd: the 16 products on zmm ---------------------------------------------------------------------------
@pytest.mark.parametrize("hw,m", [((8, 8), 40), ((10, 10), 32), ((9, 13), 48), ((16, 12), 24)])
@pytest.mark.parametrize("threads", [1, 2])
def test_winograd(hw, m, threads):
    """16, 25, 35 and 48 patches (last row panels of 4, 1, 5 and 6), column tails, an NHWC input and output, then an
    NCHW one"""
    c = 32
    feeds = {"x": _rand(2, c, *hw)}
    inits = {"wi": _rand(c, c, 1, 1, scale=0.3), "w": _rand(m, c, 3, 3, scale=0.1), "b": _rand(m),
             "w2": _rand(m, m, 3, 3, scale=0.1), "wo": _rand(4, m, 1, 1, scale=0.3)}  # fmt: skip
    nodes = [
        _fconv("xi", "x", "wi", ""),
        _fconv("a", "xi", "w", "b", pads=[1, 1, 1, 1], act="Relu"),
        _fconv("y", "a", "w2", "b", res="a", pads=[1, 1, 1, 1], act="Clip", params=(-1.0, 1.0)),  # NCHW out
        _fconv("yo", "y", "wo", ""),
    ]
    _check(nodes, feeds, ["y", "yo"], inits, threads=threads)
