"""The Cortex-M int8 kernel sets (cortex_m: integer depthwise for the FPU-less M3; cortex_m_dsp: SMLAD on
M4/M7/M33; cortex_m_mve: Helium on M55) bit-exact with
the reference kernels under QEMU: random shapes with tails in M, N and K, odd channel counts, padding, strides,
dilation, 10x4 stems, extreme zero points and requantisation, NCHW/NHWC in and out (cortex_m/kernel_check.c);
and the reference outputs on each core hash to the host's."""

from __future__ import annotations

import shutil

import pytest

from . import cortex_m_check as cm

pytestmark = [pytest.mark.slow, pytest.mark.boards]  # tests/system-packages.txt: gcc-arm-none-eabi, qemu-system-arm
CASES = 40


def _need() -> None:
    for tool in (cm.CC, "qemu-system-arm"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is missing")


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    lines = cm.host_lines(tmp_path_factory.mktemp("host"), CASES).splitlines()
    assert lines[-1] == "PASS" and len(lines) == 7, lines
    return lines


@pytest.mark.parametrize("core", ["cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55"])
def test_kernel_set_is_bit_exact_with_the_reference_and_the_host(core: str, host: list[str], tmp_path) -> None:
    _need()
    out = cm.run_core(core, cm.build_core(core, tmp_path, CASES))
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines[-1:] == ["PASS"], f"{core}:\n{out}"
    assert lines == host, f"{core}: the reference outputs differ from the host's\n{out}\nhost:\n" + "\n".join(host)
    for line in lines[:-1]:  # every kernel ran its cases
        assert " bad=0 " in line and (f"cases={CASES} " in line or line.startswith("rq32 ")), line


def test_the_sets_hold_their_instructions(tmp_path) -> None:
    """The DSP set's tile is SMLAD code and the MVE set's VMLADAVA code (not the reference compiled again)."""
    _need()
    dsp = set(cm.assembly("cortex-m4", tmp_path / "m4").split())
    assert {"smlad", "sxtb16", "pkhbt", "pkhtb"} <= dsp
    mve = set(cm.assembly("cortex-m55", tmp_path / "m55").split())
    assert {"vmladava.s8", "vmladava.s16", "vldrh.u16"} <= mve and "smlad" not in mve
