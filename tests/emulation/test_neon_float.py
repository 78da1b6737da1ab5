"""The NEON float kernels (kernels/arm: gemm.c, conv_nhwc.c, conv_dw_nhwc.c, conv_wino.c): compiled into the ARM
targets' kernel archives (their own symbols, vector fused multiply-adds in them), left out of the portable riscv64
one, and within the float tolerance of the host under QEMU on small models that reach every NEON path."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from burnedge import targets as be_targets
from burnedge.backends.c.build import kernel_library
from burnedge.backends.c.cross import toolchain

from . import matrix

pytestmark = [pytest.mark.slow, pytest.mark.boards]  # boards: tests/system-packages.txt
TOLERANCE = 1e-4  # README: float results within 1e-4 relative of the host
ARM = ("rpi3", "rpi4", "rpi5")
NEON_SYMBOLS = ("be_gemm_tile_neon", "be_conv_nhwc_jobs_neon", "be_dwconv_nhwc_band_neon", "be_conv_wino_gemm_neon")
FMA = {"armv7": re.compile(r"\bvfma\.f32\s+q\d+, q\d+, q\d+"), "aarch64": re.compile(r"\bfmla\s+v\d+\.4s, v\d+\.4s")}


def _tool(target, name: str) -> str:
    tool = f"{target.triple}-{name}"
    if shutil.which(tool) is None:  # CI installs every cross binutils (.ci/run): there a missing one fails
        (pytest.fail if os.environ.get("CI") else pytest.skip)(f"{tool} is not installed")
    return tool


def _archive(name: str):
    t = be_targets.get(name)
    return t, kernel_library(toolchain(t))


@pytest.mark.parametrize("name", ARM)
def test_neon_kernels_in_the_arm_archives(name):
    target, lib = _archive(name)
    symbols = subprocess.run([_tool(target, "nm"), str(lib)], capture_output=True, text=True, check=True).stdout
    defined = {line.split()[-1] for line in symbols.splitlines() if " T " in line}
    assert set(NEON_SYMBOLS) <= defined
    text = subprocess.run([_tool(target, "objdump"), "-d", str(lib)], capture_output=True, text=True, check=True)
    members = re.split(r"\n(?=\S+\.o:\s+file format)", text.stdout)
    for sym in NEON_SYMBOLS:  # the object that defines it holds the vector fused multiply-adds
        (member,) = [m for m in members if f"<{sym}>:" in m]
        assert len(FMA[target.arch].findall(member)) >= 16, f"{sym} on {name}: no vector fused multiply-adds"


def test_portable_on_riscv64():
    target, lib = _archive("riscv64")
    symbols = subprocess.run([_tool(target, "nm"), str(lib)], capture_output=True, text=True, check=True).stdout
    assert "be_gemm_tile" in symbols and not any(s in symbols for s in NEON_SYMBOLS)


# -- models that reach every NEON path, exported for the host and the ARM boards and emulated ---------------------
def _init(rng, name, *shape, scale=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def _model(nodes, inputs, outputs, inits, name) -> onnx.ModelProto:
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="tests")


def gemm_model() -> onnx.ModelProto:
    """Gemm with odd M/N/K tails (M = 7: a 6-row tile and a 1-row one), transposed A (contiguous rows), relu,
    hardswish, leaky relu and sigmoid epilogues, alpha/beta and a broadcast C."""
    rng = np.random.default_rng(3)
    f = TensorProto.FLOAT
    inits = [_init(rng, "w1", 37, 45), _init(rng, "b1", 45), _init(rng, "w2", 45, 19), _init(rng, "c2", 1, 19),
             _init(rng, "w3", 19, 6), _init(rng, "w4", 7, 13)]  # fmt: skip
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["g1"]),
        helper.make_node("HardSwish", ["g1"], ["h1"]),
        helper.make_node("Gemm", ["h1", "w2", "c2"], ["g2"], alpha=0.75, beta=1.5),
        helper.make_node("LeakyRelu", ["g2"], ["h2"], alpha=0.1),
        helper.make_node("Gemm", ["h2", "w4"], ["g4"], transA=1),  # (19 x 7) x (7 x 13)
        helper.make_node("Relu", ["g4"], ["y2"]),
        helper.make_node("MatMul", ["h2", "w3"], ["g3"]),
        helper.make_node("Sigmoid", ["g3"], ["y1"]),
    ]
    return _model(nodes, [helper.make_tensor_value_info("x", f, [7, 37])],
                  [helper.make_tensor_value_info("y1", f, [7, 6]), helper.make_tensor_value_info("y2", f, [19, 13])],
                  inits, "neon_gemm")  # fmt: skip


def conv_model() -> onnx.ModelProto:
    """3x3 conv in the NHWC tile (NCHW input transposed), Winograd, depthwise 3x3 stride 1 and 2 with padding,
    pointwise convs read in place (16-wide panels with tails, a residual add, the 8x8 tile for M <= 8), a 5x5
    depthwise over 6 channels, a 1x1 NCHW conv (GEMM tiles); relu, clip, hardswish, leaky relu, sigmoid."""
    rng = np.random.default_rng(5)
    f = TensorProto.FLOAT
    inits = [_init(rng, "w1", 32, 3, 3, 3), _init(rng, "b1", 32), _init(rng, "w2", 32, 32, 3, 3, scale=0.1),
             _init(rng, "b2", 32), _init(rng, "wd1", 32, 1, 3, 3), _init(rng, "wd2", 32, 1, 3, 3),
             _init(rng, "bd2", 32), _init(rng, "wp", 20, 32, 1, 1), _init(rng, "bp", 20),
             _init(rng, "wq", 20, 32, 1, 1), _init(rng, "w5", 6, 20, 1, 1), _init(rng, "b5", 6),
             _init(rng, "wd3", 6, 1, 5, 5), _init(rng, "w0", 7, 3, 1, 1), _init(rng, "b0", 7)]  # fmt: skip
    conv = helper.make_node
    nodes = [
        conv("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        conv("Relu", ["c1"], ["r1"]),
        conv("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),  # Winograd: C = 32, 16x16 outputs
        conv("Clip", ["c2", "lo", "hi"], ["r2"]),
        conv("Conv", ["r2", "wd1"], ["d1"], group=32, pads=[1, 1, 1, 1]),
        conv("HardSwish", ["d1"], ["h1"]),
        conv("Conv", ["h1", "wd2", "bd2"], ["d2"], group=32, pads=[1, 1, 1, 1], strides=[2, 2]),
        conv("Relu", ["d2"], ["h2"]),
        conv("Conv", ["h2", "wp", "bp"], ["p1"]),
        conv("Conv", ["h2", "wq"], ["p2"]),
        conv("Add", ["p1", "p2"], ["s"]),
        conv("Relu", ["s"], ["r3"]),
        conv("Conv", ["r3", "w5", "b5"], ["c5"]),
        conv("LeakyRelu", ["c5"], ["l5"], alpha=0.2),
        conv("Conv", ["l5", "wd3"], ["d3"], group=6, pads=[2, 2, 2, 2]),
        conv("Sigmoid", ["d3"], ["y"]),
        conv("Conv", ["x", "w0", "b0"], ["y0"]),
    ]
    inits += [numpy_helper.from_array(np.float32(0.0), "lo"), numpy_helper.from_array(np.float32(6.0), "hi")]
    return _model(nodes, [helper.make_tensor_value_info("x", f, [1, 3, 16, 16])],
                  [helper.make_tensor_value_info("y", f, [1, 6, 8, 8]), helper.make_tensor_value_info("y0", f,
                                                                                                     [1, 7, 16, 16])],
                  inits, "neon_conv")  # fmt: skip


@pytest.mark.parametrize("build", [gemm_model, conv_model], ids=["gemm", "conv"])
def test_float_models_under_emulation(build, tmp_path):
    bundle = matrix.export(build(), "float", tmp_path / "m.bedge", ARM)
    for row in matrix.check(bundle, ARM, build.__name__, "float"):
        assert row.ok and row.relative <= TOLERANCE, f"{row.target}: max relative error {row.relative:.3g}"
