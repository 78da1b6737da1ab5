"""C backend int8 kernels against the int8 spec (burnedge/ops/quantized.py), asserted byte for byte: QConv (GEMM and
depthwise paths), QMatMul, QAdd/QMul with broadcasting, QLut, QRequant, QSoftmax, QAvgPool/QGlobalAvgPool, ONNX
QuantizeLinear/DequantizeLinear, int8 MaxPool and movement ops; extreme accumulators and requantisation
parameters; thread-count independence; the portable (no AVX2) build."""

from __future__ import annotations

import numpy as np
import pytest

import burnedge
from burnedge.backends.c import build, prepare, slots
from burnedge.backends.c.emit import weights_blob
from burnedge.backends.c.lower.quantized import rq_params
from burnedge.backends.c.runtime import CModel
from burnedge.ir import Graph, Node, Value
from burnedge.ops import for_onnx
from burnedge.quantize.qparams import requantize

RNG = np.random.default_rng(0)
I8 = np.int8


def _i8(*shape, lo=-128, hi=127) -> np.ndarray:
    return RNG.integers(lo, hi + 1, shape).astype(I8)


def _rq(n: int, lo: int = -15, hi: int = -8) -> dict:
    """Random per-channel multipliers in [2^30, 2^31) and shifts in [lo, hi]."""
    return {"multiplier": RNG.integers(2**30, 2**31, n).astype(np.int32),
            "shift": RNG.integers(lo, hi + 1, n).astype(np.int32)}  # fmt: skip


class G:
    """A graph built node by node from the spec ops; each output's reference is computed as it is added."""

    def __init__(self):
        self.values: dict[str, Value] = {}
        self.data: dict[str, np.ndarray] = {}
        self.inputs: list[str] = []
        self.nodes: list[Node] = []
        self.outs: list[str] = []

    def input(self, name: str, arr: np.ndarray) -> str:
        self.values[name] = Value(name, arr.dtype, arr.shape)
        self.data[name] = arr
        self.inputs.append(name)
        return name

    def const(self, name: str, arr: np.ndarray) -> str:
        self.values[name] = Value(name, arr.dtype, arr.shape, arr)
        self.data[name] = arr
        return name

    def node(self, op: str, inputs: list[str], out: str, domain: str = "burnedge", output: bool = True, **attrs) -> str:
        opdef = for_onnx(op, 17, domain)
        args = [self.data[i] if i else None for i in inputs]
        ref = opdef.ref(*args, **attrs)
        ref = ref[0] if isinstance(ref, (tuple, list)) else ref
        self.data[out] = np.asarray(ref)
        self.values[out] = Value(out, self.data[out].dtype, self.data[out].shape)
        self.nodes.append(Node(opdef, out, list(inputs), [out], attrs))
        if output:
            self.outs.append(out)
        return out

    def model(self) -> burnedge.Model:
        g = Graph("t", list(self.inputs), list(self.outs), list(self.nodes), dict(self.values), 17)
        g.verify()
        return burnedge.Model(g, "t")

    def feeds(self) -> dict[str, np.ndarray]:
        return {n: self.data[n] for n in self.inputs}

    def check(self, threads: int = 1) -> None:
        got = burnedge.Session(self.model(), backend="c", threads=threads).run(self.feeds())
        _same(self, got)


def _same(g: G, got: dict) -> None:
    for name in g.outs:
        want = g.data[name]
        assert got[name].dtype == want.dtype and got[name].shape == want.shape, name
        bad = np.flatnonzero(got[name].reshape(-1) != want.reshape(-1))
        assert bad.size == 0, f"{name}: {bad.size} of {want.size} differ, first at {bad[:5].tolist()}"


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
def _qconv(
    g: G, name: str, x: str, m: int, cg: int, k: tuple, bias=True, xzp=0, yzp=0, rq=None, output=True, **attrs
) -> str:
    w = g.const(f"{name}_w", _i8(m, cg, *k, lo=-127))
    ins = [x, w]
    if bias:
        ins.append(g.const(f"{name}_b", RNG.integers(-30000, 30000, m).astype(np.int32)))
    return g.node("QConv", ins, name, output=output, x_zero_point=xzp, y_zero_point=yzp, **(rq or _rq(m)), **attrs)


def test_qconv_gemm_path():
    g = G()
    x = g.input("x", _i8(2, 6, 13, 11))
    x1 = g.input("x1", _i8(1, 5, 23))
    _qconv(g, "c0", x, 10, 6, (3, 3), pads=[1, 1, 1, 1], xzp=-7, yzp=3)
    _qconv(g, "c1", x, 10, 6, (3, 3), pads=[0, 2, 1, 0], strides=[2, 3], xzp=100, yzp=-20)
    _qconv(g, "c2", x, 7, 6, (3, 3), bias=False, dilations=[2, 1], pads=[2, 1, 2, 1], xzp=-128)
    _qconv(g, "c3", x, 17, 6, (1, 1), xzp=5)
    _qconv(g, "c4", x, 17, 6, (1, 1), strides=[2, 2], xzp=127, y_min=0, y_max=100)
    _qconv(g, "c5", x, 4, 6, (3, 5), auto_pad="SAME_UPPER", strides=[2, 1], xzp=-3)
    _qconv(g, "c6", x, 4, 6, (3, 5), auto_pad="SAME_LOWER", strides=[1, 2], xzp=9)
    _qconv(g, "c7", x, 4, 6, (3, 5), auto_pad="VALID")
    _qconv(g, "c8", x, 8, 3, (3, 3), group=2, pads=[1, 1, 1, 1], xzp=-50, yzp=50)
    _qconv(g, "c9", x1, 3, 5, (4,), pads=[1, 2], strides=[2], dilations=[2], xzp=11)
    _qconv(g, "c10", x, 12, 1, (3, 3), group=6, pads=[2, 2, 2, 2], xzp=1)  # multiplier 2: GEMM path per group
    _qconv(g, "c11", x, 6, 2, (2, 2), group=3, strides=[2, 2], rq=_rq(6, -3, 3))  # big multipliers saturate
    g.check()


def test_qconv_depthwise_path():
    g = G()
    x = g.input("x", _i8(2, 4, 19, 37))
    s = g.input("s", _i8(1, 3, 5, 3))
    x1 = g.input("x1", _i8(1, 4, 40))
    _qconv(g, "d0", x, 4, 1, (3, 3), group=4, pads=[1, 1, 1, 1], xzp=-9, yzp=4)
    _qconv(g, "d1", x, 4, 1, (3, 3), group=4, pads=[1, 1, 1, 1], strides=[2, 2], xzp=127)
    _qconv(g, "d2", x, 4, 1, (5, 5), group=4, pads=[2, 2, 2, 2], bias=False, xzp=-128)
    _qconv(g, "d3", x, 4, 1, (5, 5), group=4, pads=[1, 2, 2, 1], strides=[2, 2], xzp=3)
    _qconv(g, "d4", x, 8, 1, (3, 3), group=4, pads=[1, 1, 1, 1], xzp=-1)  # channel multiplier 2
    _qconv(g, "d5", x, 4, 1, (3, 3), group=4, dilations=[2, 3], pads=[2, 3, 2, 3], xzp=60)
    _qconv(g, "d6", x, 4, 1, (2, 3), group=4, strides=[3, 2], xzp=-60, y_min=-100, y_max=20)
    _qconv(g, "d7", x, 4, 1, (3, 3), group=4, auto_pad="SAME_UPPER", strides=[2, 2])
    _qconv(g, "d8", s, 3, 1, (3, 3), group=3, pads=[1, 1, 1, 1], xzp=2)
    _qconv(g, "d9", x1, 4, 1, (5,), group=4, pads=[2, 2], xzp=-4)
    _qconv(g, "d10", x, 4, 1, (3, 3), group=4, pads=[1, 1, 1, 1], rq=_rq(4, -2, 2))
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
    xw[0, RNG.integers(0, k, 300)] = _i8(300, 1, 1)
    xb = g.input("xb", xw)
    wb = g.const("wb", np.where(RNG.random((3, k, 1, 1)) < 0.9, -128, 127).astype(I8))
    g.node("QConv", [xb, wb], "yb", x_zero_point=127, multiplier=[2**30] * 3, shift=[-12, -14, -16])
    g.check()


def test_qconv_results_do_not_depend_on_threads():
    g = G()
    x = g.input("x", _i8(2, 16, 20, 20))
    _qconv(g, "a", x, 24, 16, (3, 3), pads=[1, 1, 1, 1], xzp=-5)
    _qconv(g, "b", x, 16, 1, (3, 3), group=16, pads=[1, 1, 1, 1], xzp=5)
    model, feeds = g.model(), g.feeds()
    for threads in (2, 3):
        _same(g, burnedge.Session(model, backend="c", threads=threads).run(feeds))


def _nhwc_chain() -> G:
    """Convs that keep their activations channels-last between them: every kernel/layout pairing of qconv_nhwc.c."""
    g = G()
    x = g.input("x", _i8(2, 5, 11, 9))
    x1 = g.input("x1", _i8(1, 6, 30))
    a = _qconv(g, "a", x, 12, 5, (3, 3), pads=[1, 1, 1, 1], xzp=-3, yzp=4, output=False)  # NCHW -> NHWC
    b = _qconv(g, "b", a, 12, 1, (3, 3), group=12, pads=[1, 2, 0, 1], strides=[2, 1], xzp=4, yzp=-2, output=False)
    c = _qconv(g, "c", b, 20, 12, (1, 1), xzp=-2, yzp=1, output=False)  # NHWC rows read in place
    d = _qconv(g, "d", c, 9, 20, (1, 1), strides=[2, 2], xzp=1, yzp=0, output=False)  # strided 1x1: gathered
    e = _qconv(g, "e", c, 9, 20, (3, 2), dilations=[2, 2], pads=[2, 1, 2, 1], strides=[2, 2], xzp=1, output=False)
    r = g.node("QAdd", [d, e], "r", a_zero_point=0, b_zero_point=0, y_zero_point=5, output=False, **_add_attrs(32))
    t = g.node("QLut", [r], "t", output=False, table=_i8(256))
    _qconv(g, "f", t, 9, 1, (3, 3), group=9, pads=[1, 1, 1, 1], xzp=-7, y_min=-20, y_max=90)  # NHWC -> NCHW
    _qconv(g, "h", t, 3, 9, (2, 2), strides=[1, 2], xzp=-7)  # NHWC -> NCHW through the GEMM
    g.node("QGlobalAvgPool", [t], "p", zero_point=-7)
    k = _qconv(g, "k", x1, 13, 6, (5,), pads=[2, 2], xzp=9, output=False)  # 1-D
    _qconv(g, "l", k, 13, 1, (3,), group=13, pads=[1, 1], strides=[2], xzp=-1)
    return g


def test_qconv_channels_last():
    """Chains of channels-last convs give the spec's bytes on any thread count; the layout choice is the intended
    one (an elementwise op ties its operands' layouts; graph outputs and other readers stay NCHW)."""
    from burnedge.backends.c.lower.quantized import nhwc_int8_tensors

    g = _nhwc_chain()
    assert nhwc_int8_tensors(g.model().graph) == {"a", "b", "c", "d", "e", "r", "t", "k"}
    for threads in (1, 3):
        g.check(threads)


def _stem_chain() -> G:
    """Stems on NCHW inputs of 1-5 channels (interleaved copies, im2col rows of K = 9..45 with partial packing blocks),
    narrow outputs (8 or fewer columns in a GEMM tile), and 3x3 stride-1 depthwise convs on channels-last rows of
    3..9 pixels (four pixels at a time, then one by one) with whole and partial 8-channel blocks."""
    g = G()
    for c, m, hw in ((1, 8, (9, 7)), (2, 5, (8, 8)), (3, 8, (14, 13)), (4, 24, (6, 9)), (5, 12, (7, 17))):
        x = g.input(f"x{c}", _i8(1, c, *hw))
        s = _qconv(g, f"s{c}", x, m, c, (3, 3), pads=[1, 1, 1, 1], strides=[2, 2], xzp=c - 3, yzp=2, output=False)
        d = _qconv(g, f"d{c}", s, m, 1, (3, 3), group=m, pads=[1, 1, 1, 1], xzp=2, yzp=-1, output=False)
        _qconv(g, f"p{c}", d, m, 1, (3, 3), group=m, pads=[1, 1, 1, 1], xzp=-1, y_min=-60, y_max=100)  # -> NCHW
    return g


def test_stems_narrow_tiles_and_depthwise_rows():
    from burnedge.backends.c.lower.quantized import nhwc_int8_tensors

    g = _stem_chain()
    assert {f"s{c}" for c in range(1, 6)} | {f"d{c}" for c in range(1, 6)} <= nhwc_int8_tensors(g.model().graph)
    for threads in (1, 2):
        g.check(threads)


def test_nhwc_layout_is_dropped_for_other_readers():
    """A tensor some NCHW-only op reads stays NCHW, and so do the operands of the elementwise op it comes from."""
    from burnedge.backends.c.lower.quantized import nhwc_int8_tensors

    g = G()
    x = g.input("x", _i8(1, 4, 6, 6))
    a = _qconv(g, "a", x, 8, 4, (1, 1), output=False)
    b = _qconv(g, "b", x, 8, 4, (3, 3), pads=[1, 1, 1, 1], output=False)
    r = g.node("QAdd", [a, b], "r", output=False, **_add_attrs(32))
    g.node("MaxPool", [r], "mp", domain="", kernel_shape=[2, 2])
    c = _qconv(g, "c", x, 8, 4, (1, 1), output=False)
    _qconv(g, "d", c, 8, 1, (3, 3), group=8, pads=[1, 1, 1, 1])
    assert nhwc_int8_tensors(g.model().graph) == {"c"}
    g.check()


# -- QMatMul --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,k,n", [((1, 7), 7, 5), ((13, 33), 33, 40), ((2, 3, 64), 64, 17), ((6, 16), 16, 16)])
def test_qmatmul(shape, k, n):
    g = G()
    a = g.input("a", _i8(*shape))
    b = g.const("b", _i8(k, n, lo=-127))
    bias = g.const("bias", RNG.integers(-(2**20), 2**20, n).astype(np.int32))
    g.node("QMatMul", [a, b, bias], "y", a_zero_point=-17, y_zero_point=9, **_rq(n))
    g.node("QMatMul", [a, b], "y2", a_zero_point=127, **_rq(n, -3, 1), y_min=-20, y_max=90)
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
    a = g2.input("a", _i8(37, 100))
    g2.node("QMatMul", [a, g2.const("b", _i8(100, 70))], "y", a_zero_point=3, **_rq(70))
    g2.check(threads=3)


# -- elementwise ----------------------------------------------------------------------------------------------------
def _add_attrs(shift: int = 32) -> dict:
    return {"a_multiplier": int(RNG.integers(2**29, 2**31)), "b_multiplier": int(RNG.integers(2**28, 2**31)),
            "shift": shift}  # fmt: skip


def test_qadd_qmul_broadcasting():
    g = G()
    a = g.input("a", _i8(2, 3, 5, 17))
    b = g.input("b", _i8(2, 3, 5, 17))
    c = g.input("c", _i8(3, 1, 1))
    d = g.input("d", _i8(17))
    e = g.input("e", _i8(2, 1, 5, 1))
    zps = {"a_zero_point": -3, "b_zero_point": 100, "y_zero_point": -128}
    for i, (x, y) in enumerate([(a, b), (a, c), (d, a), (a, e), (e, d), (c, d)]):
        g.node("QAdd", [x, y], f"add{i}", **zps, **_add_attrs(int(RNG.integers(30, 35))))
        g.node("QMul", [x, y], f"mul{i}", **zps, multiplier=int(RNG.integers(2**30, 2**31)),
               shift=int(RNG.integers(-12, -4)))  # fmt: skip
    for i, shift in enumerate([1, 5, 9, 10, 31, 45, 62]):  # scalar and vector QAdd paths
        g.node("QAdd", [a, b], f"adds{i}", a_zero_point=127, b_zero_point=-128, y_zero_point=5,
               **_add_attrs(shift), y_min=-50, y_max=60)  # fmt: skip
    for i, shift in enumerate([-40, -31, -20, 0, 5, 40]):
        g.node("QMul", [a, b], f"muls{i}", a_zero_point=-128, b_zero_point=127, multiplier=2**31 - 1, shift=shift)
    g.node("QMul", [a, b], "mul0m", multiplier=0, shift=-3)
    big = g.input("big", _i8(70000))
    g.node("QAdd", [big, big], "addbig", a_zero_point=1, **_add_attrs(31))
    g.check()
    g.check(threads=2)


def test_qlut_qrequant():
    g = G()
    x = g.input("x", np.concatenate([np.arange(-128, 128), _i8(1000)]).astype(I8).reshape(4, -1))
    g.node("QLut", [x], "lut", table=_i8(256))
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
    zc = _i8(5)
    q = g.node("QuantizeLinear", [x, g.const("sc", sc), g.const("zc", zc)], "qa", domain="", axis=1)
    g.node("DequantizeLinear", [q, "sc", "zc"], "dqa", domain="", axis=1)
    sw = (RNG.random(9) + 0.05).astype(np.float32)
    g.node("QuantizeLinear", [x, g.const("sw", sw), g.const("zw", (_i8(9).astype(np.int16) + 128).astype(np.uint8))],
           "qw", domain="", axis=-1)  # fmt: skip
    i32 = g.input("i32", RNG.integers(-(2**31), 2**31, 300).astype(np.int32))
    g.node("DequantizeLinear", [i32, g.const("s32", np.array(1e-3, np.float32))], "dq32", domain="")
    g.check()


# -- softmax and pools ----------------------------------------------------------------------------------------------
def _softmax_table(scale: float) -> np.ndarray:
    return np.rint(np.exp(-np.arange(256) * scale) * 2**20).astype(np.int32)


def test_qsoftmax():
    g = G()
    x = _i8(3, 7, 10)
    x[0, 0] = 5  # ties
    x[0, 1] = -128
    x[0, 2, :5], x[0, 2, 5:] = 127, -128  # extremes
    x[0, 3] = [127] + [-128] * 9
    xi = g.input("x", x)
    for i, (axis, scale) in enumerate([(-1, 0.05), (1, 0.2), (0, 0.01), (2, 1.0), (-1, 1e-4)]):
        g.node("QSoftmax", [xi], f"sm{i}", axis=axis, table=_softmax_table(scale))
    wide = g.input("w", _i8(2, 3000))
    g.node("QSoftmax", [wide], "smw", axis=-1, table=_softmax_table(0.02))
    g.check()


def test_qpools():
    g = G()
    x = g.input("x", _i8(2, 3, 11, 14))
    x1 = g.input("x1", _i8(2, 3, 19))
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
    g.node("QGlobalAvgPool", [g.input("big", _i8(1, 2, 40, 41))], "gapbig", zero_point=17)
    g.node("MaxPool", [x], "mp", domain="", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    g.node("GlobalMaxPool", [x], "gmp", domain="")
    g.check()


def test_int8_movement_ops():
    g = G()
    x = g.input("x", _i8(2, 3, 4, 5))
    y = g.input("y", _i8(2, 2, 4, 5))
    g.node("Concat", [x, y], "cat", domain="", axis=1)
    g.node("Transpose", [x], "tr", domain="", perm=[0, 2, 3, 1])
    g.node("Reshape", [x, g.const("sh", np.array([2, -1], np.int64))], "rs", domain="")
    g.node("Slice", [x, g.const("st", np.array([1], np.int64)), g.const("en", np.array([3], np.int64)),
                     g.const("ax", np.array([1], np.int64))], "sl", domain="")  # fmt: skip
    g.node("Flatten", [x], "fl", domain="", axis=2)
    g.check()


# -- a chain, and the portable build --------------------------------------------------------------------------------
def _chain() -> G:
    g = G()
    x = g.input("x", (RNG.standard_normal((2, 8, 15, 15)) * 2).astype(np.float32))
    q = g.node("QuantizeLinear", [x, g.const("s", np.array(0.05, np.float32)), g.const("z", np.array(3, I8))], "q",
               domain="", output=False)  # fmt: skip
    c = _qconv(g, "c", q, 16, 8, (3, 3), pads=[1, 1, 1, 1], xzp=3, yzp=-10)
    d = _qconv(g, "d", c, 16, 1, (3, 3), group=16, pads=[1, 1, 1, 1], strides=[2, 2], xzp=-10, yzp=2)
    e = _qconv(g, "e", d, 16, 16, (1, 1), xzp=2, yzp=-1)
    r = g.node("QAdd", [d, e], "r", a_zero_point=2, b_zero_point=-1, y_zero_point=0, **_add_attrs(32))
    p = g.node("QGlobalAvgPool", [r], "p", zero_point=0)
    f = g.node("Reshape", [p, g.const("shape", np.array([2, 16], np.int64))], "f", domain="", output=False)
    mm = g.node("QMatMul", [f, g.const("wm", _i8(16, 10))], "mm", a_zero_point=0, y_zero_point=7, **_rq(10))
    g.node("QSoftmax", [mm], "sm", table=_softmax_table(0.1))
    g.node("DequantizeLinear", [mm, g.const("so", np.array(0.1, np.float32)), g.const("zo", np.array(7, I8))], "out",
           domain="")  # fmt: skip
    return g


def test_chain():
    _chain().check()


def test_portable_kernels():
    """The kernel library built without its AVX2 paths gives the same bytes."""
    host = build.host_toolchain()
    tc = build.Toolchain(host.cc, (*host.cflags, "-DBURNEDGE_PORTABLE"), host.ldflags, host.ar, "portable")
    for g in (_chain(), _portable_cases(), _nhwc_chain(), _stem_chain()):
        plan, emitted = prepare(g.model().graph)
        ins, o, consts = slots(plan)
        cm = CModel(build.build_model(emitted.source, tc), weights_blob(emitted), ins, o, consts, 2)
        _same(g, cm.run(g.feeds()))


def _portable_cases() -> G:
    g = G()
    x = g.input("x", _i8(1, 6, 9, 10))
    _qconv(g, "c", x, 8, 3, (3, 3), group=2, pads=[1, 0, 1, 2], strides=[1, 2], xzp=9)
    _qconv(g, "d", x, 12, 1, (3, 3), group=6, pads=[1, 1, 1, 1], strides=[2, 1], xzp=-9, rq=_rq(12, -2, 1))
    g.node("QAdd", [x, x], "a", a_zero_point=1, b_zero_point=2, **_add_attrs(33))
    g.node("QMul", [x, g.input("b", _i8(1, 6, 1, 10))], "m", multiplier=2**30, shift=-6)
    g.node("QRequant", [x], "rq", x_zero_point=4, y_zero_point=-4, multiplier=1518500250, shift=1)
    xf = g.input("xf", (RNG.standard_normal((3, 40)) * 9).astype(np.float32))
    g.node("QuantizeLinear", [xf, g.const("s", np.array(0.07, np.float32)), g.const("z", np.array(-2, I8))], "q",
           domain="")  # fmt: skip
    g.node("QGlobalAvgPool", [g.input("big", _i8(1, 2, 40, 41))], "gap", zero_point=17)
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
