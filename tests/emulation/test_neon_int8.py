"""The ARM int8 kernels (NEON on armv7/aarch64, sdot with dotprod): compiled into the right target archives, and
bit-exact with the host under QEMU on models that reach every NEON path (GEMM and sdot tiles with tails in M, N
and K, the depthwise kernel, QMatMul with an activation zero point, clipped outputs, extreme requantisation)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge.backends.c import build
from burnedge.backends.c.cross import toolchain
from burnedge.ir import Graph, Node, Value
from burnedge.ops import for_onnx
from burnedge.targets import get

from . import matrix

pytestmark = [pytest.mark.slow, pytest.mark.boards]  # boards: tests/system-packages.txt
TARGETS = ("rpi3", "rpi4", "rpi5")
RNG = np.random.default_rng(5)
I8 = np.int8
NEON = {"be_qgemm_tile_neon", "be_qdwconv_neon_channel", "be_qbinary_neon_row"}
SDOT = {"be_qgemm_tile_sdot", "be_qa_quads"}


def _tool(target: str, name: str) -> str:
    tc = toolchain(get(target))
    tool = tc.cc[: -len("gcc")] + name
    if shutil.which(tool) is None:  # CI installs every cross binutils (.ci/run): there a missing one fails
        (pytest.fail if os.environ.get("CI") else pytest.skip)(f"{tool} is missing")
    return tool


@pytest.mark.parametrize("target", ["rpi3", "rpi4", "jetson-nano", "rpi5", "jetson-orin"])
def test_the_arm_archives_hold_the_neon_kernels(target):
    lib = build.kernel_library(toolchain(get(target)))
    symbols = subprocess.run([_tool(target, "nm"), "--defined-only", str(lib)], capture_output=True, text=True,
                             check=True).stdout  # fmt: skip
    defined = {line.split()[-1] for line in symbols.splitlines() if line.count(" ") >= 2}
    dot = target in ("rpi5", "jetson-orin")
    assert NEON <= defined, NEON - defined
    assert (SDOT <= defined) if dot else not (SDOT & defined)
    code = subprocess.run([_tool(target, "objdump"), "-d", str(lib)], capture_output=True, text=True,
                          check=True).stdout  # fmt: skip
    assert ("\tsdot\t" in code) == dot  # boards without dotprod never see the instruction
    if target == "rpi3":
        assert "vmlal.s16" in code and "vmull.s32" in code
    else:
        assert "smlal" in code and "smull" in code


# -- a model of spec ops that reaches every path ---------------------------------------------------------------------
class _G:
    """Nodes of burnedge's int8 ops with their reference shapes computed as they are added."""

    def __init__(self):
        self.values: dict[str, Value] = {}
        self.data: dict[str, np.ndarray] = {}
        self.nodes: list[Node] = []
        self.inputs: list[str] = []
        self.outs: list[str] = []

    def const(self, name: str, arr: np.ndarray) -> str:
        self.values[name] = Value(name, arr.dtype, arr.shape, arr)
        self.data[name] = arr
        return name

    def quantized_input(self, name: str, shape: tuple, scale: float, zp: int) -> str:
        self.values[name] = Value(name, np.dtype(np.float32), shape)
        self.data[name] = RNG.standard_normal(shape).astype(np.float32)
        self.inputs.append(name)
        s, z = self.const(f"{name}_s", np.array(scale, np.float32)), self.const(f"{name}_z", np.array(zp, I8))
        return self.node("QuantizeLinear", [name, s, z], f"{name}_q", domain="", output=False)

    def node(self, op: str, inputs: list[str], out: str, domain: str = "burnedge", output: bool = True, **attrs):
        opdef = for_onnx(op, 17, domain)
        ref = opdef.ref(*[self.data[i] for i in inputs], **attrs)
        self.data[out] = np.asarray(ref[0] if isinstance(ref, (tuple, list)) else ref)
        self.values[out] = Value(out, self.data[out].dtype, self.data[out].shape)
        self.nodes.append(Node(opdef, out, list(inputs), [out], attrs))
        if output:
            self.outs.append(out)
        return out

    def qconv(self, name: str, x: str, m: int, k: tuple, rq: dict | None = None, **attrs) -> str:
        cg = self.data[x].shape[1] // attrs.get("group", 1)
        w = self.const(f"{name}_w", RNG.integers(-127, 128, (m, cg, *k)).astype(I8))
        b = self.const(f"{name}_b", RNG.integers(-3000, 3000, m).astype(np.int32))
        return self.node("QConv", [x, w, b], name, **(rq or _rq(m)), **attrs)

    def model(self) -> burnedge.Model:
        g = Graph("neon_int8", list(self.inputs), list(self.outs), list(self.nodes), dict(self.values), 17)
        g.verify()
        return burnedge.Model(g, "neon_int8")


def _rq(n: int, lo: int = -12, hi: int = -8) -> dict:
    return {"multiplier": RNG.integers(2**30, 2**31, n).astype(np.int32),
            "shift": RNG.integers(lo, hi + 1, n).astype(np.int32)}  # fmt: skip


def spec_model() -> burnedge.Model:
    g = _G()
    x = g.quantized_input("x", (1, 7, 9, 11), 0.02, -3)
    # GEMM path: M = 13 (a 1-row panel tail), K = 63 (k % 4 = 3), 99 output positions (3-column tail)
    c1 = g.qconv("c1", x, 13, (3, 3), pads=[1, 1, 1, 1], x_zero_point=-3, y_zero_point=5)
    g.qconv("c2", x, 8, (1, 1), x_zero_point=-3, y_zero_point=-7)  # direct 1x1, K = 7
    g.qconv("c3", c1, 17, (1, 1), x_zero_point=5, y_min=-128, y_max=-28)  # K = 13: an odd pair count, relu6-like
    # K = 117 (an odd pair count), stride 2, clipped
    g.qconv("c4", c1, 5, (3, 3), strides=[2, 2], pads=[0, 1, 1, 0], x_zero_point=5, y_zero_point=-128,
            y_min=-128, y_max=40)  # fmt: skip
    # extreme requantisation: zero, saturating, tiny multipliers and extreme shifts
    g.qconv("c5", x, 4, (3, 1), group=1, dilations=[2, 1], pads=[2, 0, 2, 0], x_zero_point=-3,
            rq={"multiplier": np.array([2**30, 2**31 - 1, 1, 1234567890], np.int32),
                "shift": np.array([-40, 3, -1, -31], np.int32)})  # fmt: skip
    g.qconv("c6", c1, 26, (3, 3), group=13, pads=[1, 1, 1, 1], x_zero_point=5)  # multiplier 2: per-group GEMM
    # depthwise: stride 1 and 2, padding, 5x5, and extreme per-channel parameters
    g.qconv("d1", c1, 13, (3, 3), group=13, pads=[1, 1, 1, 1], x_zero_point=5, y_zero_point=3)
    g.qconv("d2", c1, 13, (5, 5), group=13, strides=[2, 2], pads=[1, 2, 2, 1], x_zero_point=5, y_min=-128,
            y_max=0)  # fmt: skip
    g.qconv("d3", x, 7, (3, 3), group=7, strides=[2, 1], pads=[1, 1, 1, 1], x_zero_point=-3,
            rq={"multiplier": np.array([2**30, 2**31 - 1, 1, 0, 1717986918, 2**30, 2**31 - 1], np.int32),
                "shift": np.array([-40, 2, -1, -5, -31, -20, 0], np.int32)})  # fmt: skip
    # QMatMul: odd sizes, a nonzero activation zero point (folded into the bias), clipped outputs
    a = g.quantized_input("a", (5, 37), 0.03, 11)
    b = g.const("mm_b", RNG.integers(-127, 128, (37, 21)).astype(I8))
    bias = g.const("mm_bias", RNG.integers(-(2**16), 2**16, 21).astype(np.int32))
    g.node("QMatMul", [a, b, bias], "mm1", a_zero_point=11, y_zero_point=-9, **_rq(21))
    g.node("QMatMul", [a, b], "mm2", a_zero_point=11, y_min=-128, y_max=-10, **_rq(21, -40, 2))
    a0 = g.quantized_input("a0", (3, 2, 64), 0.03, 0)
    g.node("QMatMul", [a0, g.const("mm_b0", RNG.integers(-127, 128, (64, 33)).astype(I8))], "mm3", **_rq(33))
    # elementwise requantisation
    y1, y2 = g.node("QConv", [x, g.const("e_w", RNG.integers(-127, 128, (13, 7, 1, 1)).astype(I8))], "e1",
                    output=False, x_zero_point=-3, **_rq(13)), c1  # fmt: skip
    g.node("QAdd", [y1, y2], "add", a_zero_point=0, b_zero_point=5, y_zero_point=-2, a_multiplier=1518500250,
           b_multiplier=1073741824, shift=31, y_min=-100, y_max=100)  # fmt: skip
    g.node("QAdd", [y1, y2], "add_small_shift", a_multiplier=2**30, b_multiplier=2**29, shift=3)
    g.node("QMul", [y1, y2], "mul", a_zero_point=1, b_zero_point=5, multiplier=1300000000, shift=-7)
    g.node("QRequant", [y2], "requant", x_zero_point=5, y_zero_point=-1, multiplier=1518500250, shift=1)
    return g.model()


def float_model() -> onnx.ModelProto:
    """A float CNN with odd sizes for `quantize="int8"`: 3x3 conv, 1x1 conv, depthwise stride 2, Clip(0, 6),
    global pool and a Gemm."""
    rng = np.random.default_rng(3)

    def init(name, *shape, s=0.4):
        return numpy_helper.from_array((rng.standard_normal(shape) * s).astype(np.float32), name)

    inits = [init("w1", 12, 5, 3, 3), init("b1", 12), init("w2", 19, 12, 1, 1), init("w3", 19, 1, 3, 3),
             init("wg", 19, 11), init("bg", 11), numpy_helper.from_array(np.array(0, np.float32), "lo"),
             numpy_helper.from_array(np.array(6, np.float32), "hi")]  # fmt: skip
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"]),
        helper.make_node("Clip", ["c2", "lo", "hi"], ["r2"]),
        helper.make_node("Conv", ["r2", "w3"], ["c3"], group=19, strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Clip", ["c3", "lo", "hi"], ["r3"]),
        helper.make_node("GlobalAveragePool", ["r3"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "wg", "bg"], ["y"]),
    ]
    g = helper.make_graph(nodes, "neon_float", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 5, 13, 10])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 11])], inits)  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="tests")


def _check(bundle: Path, name: str, kind: str) -> None:
    for row in matrix.check(bundle, TARGETS, name, kind):
        assert row.ok and row.max_abs == 0 and row.same_as_host, f"{name} on {row.target}: not bit-exact ({row})"


def test_spec_ops_bit_exact_on_arm(tmp_path):
    model = spec_model()
    host = burnedge.Session(model, backend="c")
    ref = burnedge.Session(model, backend="numpy")
    feeds = burnedge.exporter.example_inputs(model.graph, seed=0)
    want, got = ref.run(feeds), host.run(feeds)
    assert all(np.array_equal(want[k], got[k]) for k in want)
    bundle = burnedge.export(model, tmp_path / "spec.bedge", target=("host", *TARGETS), test_vectors=1)
    _check(bundle, "spec", "int8")


def test_quantized_model_bit_exact_on_arm(tmp_path):
    rng = np.random.default_rng(1)
    cal = [{"x": rng.standard_normal((1, 5, 13, 10)).astype(np.float32)} for _ in range(4)]
    bundle = matrix.export(float_model(), "int8", tmp_path / "q.bedge", TARGETS, cal)
    b = burnedge.bundle.read(bundle)
    assert not b.manifest["quantization"]["kept_float"]
    assert all(f"{fn}(" in b.source for fn in ("be_qconv_nhwc_i8", "be_qdwconv_nhwc_i8", "be_qgemm_i8"))
    _check(bundle, "float_model", "int8")
