"""Running a test firmware under QEMU system mode and checking what it printed against the bundle's references.

The firmware (firmware_templates/baremetal/main.c) prints each output's bytes, each inference's SysTick ticks,
the stack's high-water mark and its own verdict over semihosting; the outputs are checked again here, in Python,
with the same rule as the Linux boards (burnedge.emulate): bit-exact for an int8 bundle and integer outputs, else
within the tolerance relative to the largest |reference|. Under ``-icount shift=0`` one instruction is one
nanosecond of QEMU's virtual clock, so ticks are proportional to instructions; a loop of 2,000,000 instructions
(calibration) gives the ratio, so the count needs no clock frequency, and does not depend on the load of the
machine running QEMU. The target's emulator.clock_hz must agree with it (a test checks).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..bundle import Bundle
from ..bundle.vectors import as_declared, bit_exact
from ..feeds import Check, compare
from ..targets import Target
from .make import FirmwareError
from .sources import qemu_argv

__all__ = ["Run", "run"]


@dataclass
class Run:
    """One emulated run of a test firmware: the checks (one per vector and output), instructions per inference,
    the measured stack, and the firmware's own last line."""

    target: str
    command: list[str]
    checks: list[Check]
    exact: bool
    tolerance: float
    instructions: list[int]  # per vector
    stack_bytes: int
    verdict: str  # the firmware's PASS / FAIL line
    wall_s: float
    outputs: list[dict[str, np.ndarray]] = field(repr=False)
    log: str = field(repr=False, default="")
    clock_hz: int = 0  # SysTick's clock as the calibration loop measured it (1 instruction = 1 ns under -icount)

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks) and self.verdict.startswith("PASS")

    @property
    def max_abs(self) -> float:
        return max((c.max_abs for c in self.checks), default=0.0)


def _parse(log: str) -> tuple[dict[tuple[int, int], bytes], dict[int, int], int | None, str]:
    """The firmware's lines; ticks[-1]: the calibration loop's (its instruction count in ticks[-2])."""
    outs, ticks, stack, verdict = {}, {}, None, ""
    for line in log.splitlines():
        parts = line.split()
        if line.startswith("out ") and len(parts) == 4:
            outs[(int(parts[1]), int(parts[2]))] = bytes.fromhex(parts[3])
        elif line.startswith("calibration ") and len(parts) == 3:
            ticks[-2], ticks[-1] = int(parts[1]), int(parts[2])
        elif line.startswith("ticks ") and len(parts) == 3:
            ticks[int(parts[1])] = int(parts[2])
        elif line.startswith("stack ") and len(parts) == 2:
            stack = int(parts[1])
        elif line.startswith(("PASS", "FAIL")):
            verdict = line.strip()
    return outs, ticks, stack, verdict


def run(b: Bundle, target: Target, elf: Path, tolerance: float = 1e-4, timeout: float = 300) -> Run:
    """Boots `elf` in the target's QEMU machine (always with `timeout`); a missing QEMU, a hang or a firmware that
    prints no verdict is a FirmwareError; a fault is a failed Run with the firmware's own reason."""
    cmd = [*qemu_argv(target), "-kernel", str(elf)]
    if shutil.which(cmd[0]) is None:
        raise FirmwareError(
            f"QEMU for target {target.name!r} is not installed ({cmd[0]!r} not found); install it with: "
            f"apt-get install {target.emulator.package if target.emulator else 'qemu-system-arm'}"
        )
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=elf.parent)
    except subprocess.TimeoutExpired:
        raise FirmwareError(f"the firmware did not finish within {timeout:g} s under {' '.join(cmd[:3])}") from None
    wall = time.perf_counter() - t0
    outs, ticks, stack, verdict = _parse(proc.stdout)
    if not verdict and stack is not None and "Lockup" in proc.stderr:  # QEMU stops a core that faults in HardFault
        verdict = (f"FAIL the core locked up, faulting inside its fault handler: most likely the stack used all of "
                   f"its {stack} bytes (raise stack_bytes in the target)")  # fmt: skip
    if not verdict or stack is None:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-8:])
        raise FirmwareError(f"the firmware stopped without a verdict under {' '.join(cmd[:3])} "
                            f"(exit status {proc.returncode}):\n{tail}")  # fmt: skip
    exact = bit_exact(b.manifest)
    tol = 0.0 if exact else tolerance
    if verdict.startswith("FAIL") and not outs:  # it stopped before any output (a fault): the firmware says why
        return Run(target.name, cmd, [], exact, tol, [], stack, verdict, wall, [], proc.stdout)
    rows = [o for o in b.manifest["outputs"] if o.get("offset") is not None]
    checks, outputs = [], []
    for v, (_, refs) in enumerate(b.vectors()):
        got = {}
        for k, o in enumerate(rows):
            raw = outs.get((v, k))
            if raw is None:
                raise FirmwareError(f"the firmware printed no output {o['name']!r} for vector {v}")
            arr = np.frombuffer(raw, np.dtype(o["dtype"])).reshape(o["shape"])
            ref = as_declared(refs, {o["name"]: o["shape"]})[o["name"]]
            checks.append(Check(v, o["name"], *compare(arr, ref, tol)))
            got[o["name"]] = arr
        outputs.append(got)
    per_tick = ticks[-2] / ticks[-1] if ticks.get(-1) else 1e9 / ((target.emulator and target.emulator.clock_hz) or 1e9)
    instructions = [round(ticks[v] * per_tick) for v in sorted(ticks) if v >= 0]
    return Run(target.name, cmd, checks, exact, tol, instructions, stack, verdict, wall, outputs, proc.stdout,
               round(1e9 / per_tick))  # fmt: skip
