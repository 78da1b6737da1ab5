"""ARM instruction counts without a board (benchmarks/arm_icount): a tiny int8 CNN as a bare-metal AArch64 image
under QEMU system mode with -icount, on the rpi4's Cortex-A72 (NEON) and the rpi5's Cortex-A76 (sdot):
bit-exact with the host's reference, the same count on every run, within a small tolerance of the recorded count
(a kernel or lowering change that costs instructions fails here: record the new count if it is meant), fewer
instructions with sdot than without, and the sdot image refused by the A72 (the instruction traps)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import burnedge
from burnedge.firmware.run import run

from .models import calibration, tiny_cnn_float_only

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.arm_icount.image import image, measure, metal_target  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.boards]  # tests/system-packages.txt: qemu-system-arm, gcc-aarch64
# instructions per inference, measured 2026-12-04 with Debian bookworm's aarch64-linux-gnu-gcc 12 and QEMU 7.2,
# after the MaxPool between the two convs went channels-last (were 67,510 and 59,405 before; 72,426 and 66,151
# before NCHW stems of <= 4 channels moved to the channels-last int8 GEMM)
RECORDED = {("rpi4", "neon"): 53_621, ("rpi5", "dotprod"): 45_601}
TOLERANCE = 0.03


@pytest.fixture(scope="module")
def tiny_int8(tmp_path_factory) -> burnedge.bundle.Bundle:
    out = tmp_path_factory.mktemp("icount") / "tiny.bedge"
    burnedge.export(tiny_cnn_float_only(), out, target="rpi4", quantize="int8", calibration=calibration(),
                    test_vectors=1, keep_float=(), progress=False)  # fmt: skip
    return burnedge.bundle.read(out)


def test_int8_instruction_counts_on_rpi4_and_rpi5(tiny_int8, tmp_path):
    counts = {}
    for board, kernels in RECORDED:
        r = measure(tiny_int8, board, kernels, tmp_path / f"{board}-{kernels}")
        assert r.ok and r.exact and r.max_abs == 0, f"{board} {kernels}: {r.verdict}"
        counts[(board, kernels)] = r.instructions[0]
    print(counts)
    for key, n in counts.items():
        assert abs(n - RECORDED[key]) <= TOLERANCE * RECORDED[key], (
            f"{key}: {n:,} instructions, recorded {RECORDED[key]:,}"
        )
    assert counts[("rpi5", "dotprod")] < counts[("rpi4", "neon")]


def test_counts_repeat_and_the_a72_traps_sdot(tiny_int8, tmp_path):
    dot = metal_target("rpi5", "dotprod")
    elf = image(tiny_int8, dot, tmp_path / "dot")
    first, again = run(tiny_int8, dot, elf), run(tiny_int8, dot, elf)
    assert first.ok and first.instructions == again.instructions
    on_a72 = run(tiny_int8, metal_target("rpi4", "neon"), elf)  # the rpi5's image on the rpi4's core
    assert not on_a72.ok and on_a72.verdict.startswith("FAIL"), on_a72.verdict
