"""Firmware: a bundle's model for a microcontroller target (os = "baremetal", e.g. cortex-m4), built from a template
of burnedge/firmware_templates/ and, for the test firmware, run under QEMU system mode.

Steps (`firmware`, then `emulate`):

1. read the bundle through the one reader (burnedge.bundle.read: hashes and signature checked before anything is
   used; a trusted key must have signed it, burnedge.bundle.signing, before anything is built) and check that its
   arena and weights fit the target's RAM and flash;
2. write the folder (sources.write_folder): the backend's model library (model.c / model.h, weights.c as const
   flash data, the kernels it calls), the template's files, the linker script made from the target's memories,
   and for `baremetal` the test vectors;
3. build it with its own Makefile (make.build): `baremetal` links firmware.elf, `library` archives
   build/libburnedge_model.a; the memory report comes from the linked ELF (make.memory_report);
4. `emulate`: boot firmware.elf in the target's QEMU machine with -icount (run.run), check every output against
   the host's reference (bit-exact for int8), and report instructions per inference and the measured stack.

The report is also written as DIR/memory.json.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import bundle as bundle_format
from ..bundle import Bundle, signing
from ..files import write_atomic
from ..targets import Target, TargetError, get
from .make import FirmwareError, build, format_report, memory_report
from .run import Run, run
from .sources import TEMPLATES, linker_script, write_folder

__all__ = [
    "REPORT",
    "TEMPLATES",
    "Firmware",
    "FirmwareError",
    "Run",
    "emulate",
    "firmware",
    "format_report",
    "linker_script",
]

REPORT = "memory.json"  # the memory report beside the firmware


@dataclass
class Firmware:
    """A built firmware folder: the target, the template, what was built (firmware.elf or the archive) and its
    memory report (a dict; see burnedge.firmware.make)."""

    target: Target
    template: str
    folder: Path
    built: Path
    report: dict[str, Any] | None  # None for the library template (nothing is linked)
    run: Run | None = None


def _open(
    source: Bundle | str | os.PathLike[str], target: str | Target, trust: bundle_format.TrustSpec
) -> tuple[Bundle, Target]:
    b = source if isinstance(source, Bundle) else bundle_format.read(source, trust)
    signing.require(b, "build its firmware")  # on the host, before anything is written or compiled
    t = target if isinstance(target, Target) else get(target)
    if t.os != "baremetal":
        raise TargetError(
            f"target {t.name!r} ({t.path}) is not a microcontroller (os = {t.os!r}); firmware is for "
            'os = "baremetal" targets such as cortex-m4'
        )
    t.check_fits(b.arena_bytes + b.weight_bytes, b.arena_bytes, b.weight_bytes)
    if not b.vectors():
        raise FirmwareError(f"{b.path}: the bundle carries no test vectors (export it with test_vectors >= 1)")
    return b, t


def firmware(
    source: Bundle | str | os.PathLike[str],
    target: str | Target,
    out: str | os.PathLike[str],
    template: str = "baremetal",
    tolerance: float = 1e-4,
    trust: bundle_format.TrustSpec = None,
) -> Firmware:
    """Writes and builds the firmware of `template` for `target` in `out` (see the module docstring); the bundle
    must be signed by a trusted key (`trust`: as Session's)."""
    b, t = _open(source, target, trust)
    folder = Path(out)
    write_folder(b, t, folder, template, tolerance)
    if template == "library":
        return Firmware(t, template, folder, build(folder, t, "build/libburnedge_model.a"), None)
    elf = build(folder, t)
    report = memory_report(t, elf)
    write_atomic(folder / REPORT, json.dumps(report, indent=2).encode())
    return Firmware(t, template, folder, elf, report)


def emulate(
    source: Bundle | str | os.PathLike[str],
    target: str | Target,
    out: str | os.PathLike[str] | None = None,
    tolerance: float = 1e-4,
    timeout: float = 300,
    trust: bundle_format.TrustSpec = None,
) -> Firmware:
    """Builds the test firmware (in `out`, else a temporary folder) and runs it under QEMU with `timeout`; the
    result's `run.ok` is the verdict, and its report holds the measured stack and instructions per inference."""
    b, t = _open(source, target, trust)
    with tempfile.TemporaryDirectory(prefix="burnedge-firmware-") as tmp:
        fw = firmware(b, t, out if out is not None else Path(tmp) / "firmware", "baremetal", tolerance)
        fw.run = run(b, t, fw.built, tolerance, timeout)
        fw.report = memory_report(t, fw.built, fw.run.stack_bytes)
        fw.report["instructions_per_inference"] = fw.run.instructions
        if out is not None:
            write_atomic(fw.folder / REPORT, json.dumps(fw.report, indent=2).encode())
        return fw
