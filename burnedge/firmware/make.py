"""Building a firmware folder with its own Makefile (the target's arm-none-eabi-gcc), and the memory report of the
linked ELF, read with the toolchain's nm and size.

The report (`memory_report`), in bytes:

    flash  code (startup, runner, model, kernels, libgcc/libm), weights (be_weights), tables (other const data),
           data_init (the initial values of .data), and apart from the total: test_vectors (the runner's inputs
           and references, which a product firmware leaves out)
    ram    arena (be_arena), stack (measured by the run: the painted stack's high-water mark; until then the
           reserve), statics (.data + .bss besides the arena)
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ..targets import Target, TargetError

__all__ = ["FirmwareError", "build", "memory_report", "tool"]

_OVERFLOW = re.compile(r"region [`']?(\w+)'? overflowed by (\d+) bytes")
_VECTORS = re.compile(r"^be_(in|ref)_\d+_\d+$|^be_vec_")


class FirmwareError(TargetError):
    """A firmware that does not build, does not run, or crashes or hangs in the emulator."""


def tool(target: Target, name: str) -> str:
    """A binutils program beside the target's compiler: arm-none-eabi-gcc -> arm-none-eabi-nm."""
    cc = target.cc
    prog = cc[: -len("gcc")] + name if cc.endswith("gcc") else name
    if shutil.which(prog) is None:
        raise FirmwareError(f"{prog!r} is not installed; install it with: apt-get install {target.package}")
    return prog


def build(folder: Path, target: Target, goal: str = "firmware.elf", jobs: int = 2, timeout: float = 600) -> Path:
    """Runs the folder's Makefile (`goal`); a region the linker overflows becomes the TargetError of the bytes
    needed and available, any other failure a FirmwareError with the compiler's last lines."""
    if shutil.which("make") is None:
        raise FirmwareError("make is not installed; install it with: apt-get install make")
    tool(target, "gcc")
    try:
        proc = subprocess.run(["make", "-C", str(folder), f"-j{jobs}", goal], capture_output=True, text=True,
                              timeout=timeout)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise FirmwareError(f"building {folder / goal} took longer than {timeout:g} s") from None
    if proc.returncode != 0:
        over = _OVERFLOW.findall(proc.stderr)
        if over:
            needs = {}
            for region, extra in over:
                m = target.memory(region.lower())
                needs[m.name] = (m.size + int(extra), "the linked firmware")
            target.check_memories(needs)
        tail = "\n".join(proc.stderr.strip().splitlines()[-20:])
        raise FirmwareError(f"building {folder / goal} failed (make {goal}):\n{tail}")
    return folder / goal


def _sections(target: Target, elf: Path) -> dict[str, int]:
    out = subprocess.run([tool(target, "size"), "-A", str(elf)], capture_output=True, text=True, check=True).stdout
    sizes = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0].startswith(".") and parts[1].isdigit():
            sizes[parts[0]] = int(parts[1])
    return sizes


def _symbols(target: Target, elf: Path) -> list[tuple[str, int, str]]:
    """(type letter, size, name) of every sized symbol."""
    out = subprocess.run([tool(target, "nm"), "-S", str(elf)], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            rows.append((parts[2], int(parts[1], 16), parts[3]))
    return rows


def memory_report(target: Target, elf: Path, stack_used: int | None = None) -> dict[str, Any]:
    """The flash and RAM of a linked firmware (see the module docstring), with the target's sizes."""
    sec = _sections(target, elf)
    syms = _symbols(target, elf)
    size = {name: n for _, n, name in syms}
    weights, arena = size.get("be_weights", 0), size.get("be_arena", 0)
    vectors = sum(n for _, n, name in syms if _VECTORS.match(name))
    tables = sum(n for kind, n, name in syms if kind in "rR" and name != "be_weights" and not _VECTORS.match(name))
    text = sec.get(".text", 0) + sec.get(".ARM.exidx", 0)
    data, bss = sec.get(".data", 0), sec.get(".bss", 0)
    code = text - weights - tables - vectors
    stack = stack_used if stack_used is not None else target.stack_bytes
    flash = {"code": code, "weights": weights, "tables": tables, "data_init": data}
    ram = {"arena": arena, "stack": stack, "statics": data + bss - arena}
    return {
        "target": target.name,
        "elf": str(elf),
        "flash": {**flash, "total": sum(flash.values()), "test_vectors": vectors,
                  "available": target.memory("flash").size},
        "ram": {**ram, "total": sum(ram.values()), "stack_measured": stack_used is not None,
                "stack_reserved": target.stack_bytes, "available": target.memory("ram").size},
    }  # fmt: skip


def format_report(r: dict[str, Any]) -> list[str]:
    """The report as the CLI prints it."""
    f, m = r["flash"], r["ram"]
    stack = "measured" if m["stack_measured"] else "reserved; run it to measure"
    return [
        f"flash      {f['total']:,} bytes of {f['available']:,}: code {f['code']:,}, weights {f['weights']:,}, "
        f"tables {f['tables']:,}, data {f['data_init']:,} (+ test vectors {f['test_vectors']:,})",
        f"ram        {m['total']:,} bytes of {m['available']:,}: arena {m['arena']:,}, stack {m['stack']:,} "
        f"({stack}), statics {m['statics']:,}",
    ]
