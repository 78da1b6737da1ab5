"""Int8 graphs for the C backend tests: a graph built node by node from the spec ops (burnedge/ops/quantized.py) with
each output's reference computed as it is added, and the chains several tests run."""

from __future__ import annotations

import numpy as np

import burnedge
from burnedge.ir import Graph, Node, Value
from burnedge.ops import for_onnx

__all__ = [
    "G",
    "I8",
    "RNG",
    "add_attrs",
    "chain",
    "i8",
    "nhwc_chain",
    "qconv",
    "rq_attrs",
    "same",
    "softmax_table",
    "stem_chain",
]

RNG = np.random.default_rng(0)
I8 = np.int8


def i8(*shape, lo=-128, hi=127) -> np.ndarray:
    return RNG.integers(lo, hi + 1, shape).astype(I8)


def rq_attrs(n: int, lo: int = -15, hi: int = -8) -> dict:
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
        same(self, got)


def same(g: G, got: dict) -> None:
    for name in g.outs:
        want = g.data[name]
        assert got[name].dtype == want.dtype and got[name].shape == want.shape, name
        bad = np.flatnonzero(got[name].reshape(-1) != want.reshape(-1))
        assert bad.size == 0, f"{name}: {bad.size} of {want.size} differ, first at {bad[:5].tolist()}"


def qconv(
    g: G, name: str, x: str, m: int, cg: int, k: tuple, bias=True, xzp=0, yzp=0, rq=None, output=True, **attrs
) -> str:
    w = g.const(f"{name}_w", i8(m, cg, *k, lo=-127))
    ins = [x, w]
    if bias:
        ins.append(g.const(f"{name}_b", RNG.integers(-30000, 30000, m).astype(np.int32)))
    return g.node("QConv", ins, name, output=output, x_zero_point=xzp, y_zero_point=yzp, **(rq or rq_attrs(m)), **attrs)


def add_attrs(shift: int = 32) -> dict:
    return {"a_multiplier": int(RNG.integers(2**29, 2**31)), "b_multiplier": int(RNG.integers(2**28, 2**31)),
            "shift": shift}  # fmt: skip


def nhwc_chain() -> G:
    """Convs that keep their activations channels-last between them: every kernel/layout pairing of qconv_nhwc.c."""
    g = G()
    x = g.input("x", i8(2, 5, 11, 9))
    x1 = g.input("x1", i8(1, 6, 30))
    a = qconv(g, "a", x, 12, 5, (3, 3), pads=[1, 1, 1, 1], xzp=-3, yzp=4, output=False)  # NCHW -> NHWC
    b = qconv(g, "b", a, 12, 1, (3, 3), group=12, pads=[1, 2, 0, 1], strides=[2, 1], xzp=4, yzp=-2, output=False)
    c = qconv(g, "c", b, 20, 12, (1, 1), xzp=-2, yzp=1, output=False)  # NHWC rows read in place
    d = qconv(g, "d", c, 9, 20, (1, 1), strides=[2, 2], xzp=1, yzp=0, output=False)  # strided 1x1: gathered
    e = qconv(g, "e", c, 9, 20, (3, 2), dilations=[2, 2], pads=[2, 1, 2, 1], strides=[2, 2], xzp=1, output=False)
    r = g.node("QAdd", [d, e], "r", a_zero_point=0, b_zero_point=0, y_zero_point=5, output=False, **add_attrs(32))
    t = g.node("QLut", [r], "t", output=False, table=i8(256))
    qconv(g, "f", t, 9, 1, (3, 3), group=9, pads=[1, 1, 1, 1], xzp=-7, y_min=-20, y_max=90)  # NHWC -> NCHW
    qconv(g, "h", t, 3, 9, (2, 2), strides=[1, 2], xzp=-7)  # NHWC -> NCHW through the GEMM
    g.node("QGlobalAvgPool", [t], "p", zero_point=-7)
    k = qconv(g, "k", x1, 13, 6, (5,), pads=[2, 2], xzp=9, output=False)  # 1-D
    qconv(g, "l", k, 13, 1, (3,), group=13, pads=[1, 1], strides=[2], xzp=-1)
    return g


def stem_chain() -> G:
    """Stems on NCHW inputs of 1-5 channels (interleaved copies, im2col rows of K = 9..45 with partial packing blocks),
    narrow outputs (8 or fewer columns in a GEMM tile), and 3x3 stride-1 depthwise convs on channels-last rows of
    3..9 pixels (four pixels at a time, then one by one) with whole and partial 8-channel blocks."""
    g = G()
    for c, m, hw in ((1, 8, (9, 7)), (2, 5, (8, 8)), (3, 8, (14, 13)), (4, 24, (6, 9)), (5, 12, (7, 17))):
        x = g.input(f"x{c}", i8(1, c, *hw))
        s = qconv(g, f"s{c}", x, m, c, (3, 3), pads=[1, 1, 1, 1], strides=[2, 2], xzp=c - 3, yzp=2, output=False)
        d = qconv(g, f"d{c}", s, m, 1, (3, 3), group=m, pads=[1, 1, 1, 1], xzp=2, yzp=-1, output=False)
        qconv(g, f"p{c}", d, m, 1, (3, 3), group=m, pads=[1, 1, 1, 1], xzp=-1, y_min=-60, y_max=100)  # -> NCHW
    return g


def softmax_table(scale: float) -> np.ndarray:
    return np.rint(np.exp(-np.arange(256) * scale) * 2**20).astype(np.int32)


def chain() -> G:
    g = G()
    x = g.input("x", (RNG.standard_normal((2, 8, 15, 15)) * 2).astype(np.float32))
    q = g.node("QuantizeLinear", [x, g.const("s", np.array(0.05, np.float32)), g.const("z", np.array(3, I8))], "q",
               domain="", output=False)  # fmt: skip
    c = qconv(g, "c", q, 16, 8, (3, 3), pads=[1, 1, 1, 1], xzp=3, yzp=-10)
    d = qconv(g, "d", c, 16, 1, (3, 3), group=16, pads=[1, 1, 1, 1], strides=[2, 2], xzp=-10, yzp=2)
    e = qconv(g, "e", d, 16, 16, (1, 1), xzp=2, yzp=-1)
    r = g.node("QAdd", [d, e], "r", a_zero_point=2, b_zero_point=-1, y_zero_point=0, **add_attrs(32))
    p = g.node("QGlobalAvgPool", [r], "p", zero_point=0)
    f = g.node("Reshape", [p, g.const("shape", np.array([2, 16], np.int64))], "f", domain="", output=False)
    mm = g.node("QMatMul", [f, g.const("wm", i8(16, 10))], "mm", a_zero_point=0, y_zero_point=7, **rq_attrs(10))
    g.node("QSoftmax", [mm], "sm", table=softmax_table(0.1))
    g.node("DequantizeLinear", [mm, g.const("so", np.array(0.1, np.float32)), g.const("zo", np.array(7, I8))], "out",
           domain="")  # fmt: skip
    return g
