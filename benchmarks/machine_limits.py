"""This machine's CPU (model, the vector flags that matter) and its arithmetic limit per core, measured now.

The limit comes from `peak.c` beside this file, compiled with gcc on the spot (inline assembly, so no -march is
needed): every vector mode the CPU has (its /proc/cpuinfo flags) is run and the fastest of each kind is the limit:
fp32 FLOP/s from FMA (zmm with AVX-512, else ymm), int8 OP/s from vpdpbusd (zmm with AVX-512 VNNI, ymm with
AVX-VNNI) or AVX2's vpmaddubsw + vpmaddwd + vpaddd. One multiply-add counts 2 ops.

    python benchmarks/machine_limits.py     # prints the CPU line and the limits
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni")  # what decides the kernels and the limit

# mode of peak.c -> (kind, cpuinfo flags it needs, what it runs)
MODES = {
    "fma512": ("fp32", ("avx512f",), "vfmadd231ps zmm"),
    "fma256": ("fp32", ("avx2", "fma"), "vfmadd231ps ymm"),
    "vnni512": ("int8", ("avx512f", "avx512_vnni"), "vpdpbusd zmm (AVX-512 VNNI)"),
    "vnni256": ("int8", ("avx_vnni",), "vpdpbusd ymm (AVX-VNNI)"),
    "avx2i8": ("int8", ("avx2",), "vpmaddubsw + vpmaddwd ymm (AVX2)"),
}


@dataclass
class Cpu:
    model: str
    cores: int
    flags: dict[str, bool]

    def line(self) -> str:
        have = ", ".join(f"{f} {'yes' if v else 'no'}" for f, v in self.flags.items())
        return f"{self.model}, {self.cores} cores ({have})"


@dataclass
class Limits:
    """Per-core limits in ops per second (None: not measurable here) and the instruction that reached each."""

    fp32: float | None = None
    int8: float | None = None
    how: dict[str, str] = field(default_factory=dict)
    measured: dict[str, float] = field(default_factory=dict)  # every mode run, ops/s
    error: str = ""

    def line(self) -> str:
        if self.error:
            return f"machine limit not measured: {self.error}"
        parts = [
            f"{kind} {value / 1e9:.0f} G{'FLOP' if kind == 'fp32' else 'OP'}/s ({self.how[kind]})"
            for kind, value in (("fp32", self.fp32), ("int8", self.int8))
            if value
        ]
        return "limit per core, measured in this run: " + "; ".join(parts) + "; N threads: N x that"


def cpu() -> Cpu:
    """The CPU's model name and flags from /proc/cpuinfo (platform's names where there is none)."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and model in ("", platform.processor(), platform.machine()):
            model = value.strip()
        elif key in ("flags", "Features") and not flags:
            flags = set(value.split())
    return Cpu(model, os.cpu_count() or 1, {f: f in flags for f in FLAGS})


def measure(seconds: float = 0.5, the_cpu: Cpu | None = None) -> Limits:
    """Compile peak.c and run each mode this CPU has for `seconds`; the best of each kind is its limit."""
    the_cpu = the_cpu or cpu()
    limits = Limits()
    if platform.machine() not in ("x86_64", "AMD64"):
        limits.error = f"peak.c has x86-64 modes only, this is {platform.machine()}"
        return limits
    gcc = shutil.which(os.environ.get("CC", "gcc")) or shutil.which("cc")
    if not gcc:
        limits.error = "no C compiler (gcc or $CC) on PATH"
        return limits
    flags = {f for f in FLAGS if the_cpu.flags[f]}
    with tempfile.TemporaryDirectory(prefix="burnedge-peak-") as tmp:
        exe = Path(tmp) / "peak"
        built = subprocess.run([gcc, "-O2", "-o", str(exe), str(HERE / "peak.c")], capture_output=True, text=True)
        if built.returncode:
            limits.error = f"{gcc} could not build peak.c: {built.stderr.strip().splitlines()[-1:]}"
            return limits
        for mode, (kind, needs, how) in MODES.items():
            if not flags.issuperset(needs):
                continue
            out = subprocess.run([str(exe), mode, str(seconds)], capture_output=True, text=True, timeout=60)
            if out.returncode:
                limits.error = f"peak {mode} failed: {out.stderr.strip()}"
                return limits
            value = float(out.stdout.split()[1])
            limits.measured[mode] = value
            if value > (getattr(limits, kind) or 0):
                setattr(limits, kind, value)
                limits.how[kind] = how
    if limits.fp32 is None:
        limits.error = "the CPU has neither AVX2+FMA nor AVX-512"
    return limits


if __name__ == "__main__":
    c = cpu()
    print(c.line())
    print(measure(the_cpu=c).line())
