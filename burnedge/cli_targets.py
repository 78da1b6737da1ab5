"""The target commands of the CLI (`targets`, `emulate`, `firmware`): parsing and printing only; the work is in
burnedge.targets, burnedge.emulate (Linux boards) and burnedge.firmware (microcontrollers)."""

from __future__ import annotations

import argparse
import json
import shutil
from collections.abc import Callable
from pathlib import Path

from . import cli_trust

__all__ = ["add_commands", "cmd_emulate", "cmd_firmware", "cmd_targets"]


def cmd_targets(a: argparse.Namespace) -> int:
    from .targets import available

    known = available(a.targets_dir)
    rows = []
    for t in known.values():
        emu = t.emulator
        rows.append(
            {
                "name": t.name,
                "description": t.description,
                "arch": t.arch,
                "triple": t.triple,
                "cores": t.cores,
                "ram_mb": t.ram_mb,
                "features": list(t.features),
                "cc": t.cc,
                "flags": list(t.flags),
                "compiler_installed": shutil.which(t.cc) is not None,
                "compiler_package": t.package,
                "emulator": emu.argv() if emu else None,
                "emulator_installed": (shutil.which(emu.command[0]) is not None) if emu else None,
                "emulator_package": emu.package if emu else None,
                "memories": {m.name: {"base": m.base, "size": m.size} for m in t.memories},
                "file": str(t.path),
            }
        )
    if a.json:
        print(json.dumps(rows, indent=2))
        return 0
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        print(f"{r['name']:{width}s}  {r['description']}")
        flags = " ".join(r["flags"])
        cc = "" if r["compiler_installed"] else f"   (missing: apt-get install {r['compiler_package']})"
        pad = " " * (width + 2)
        size = ", ".join(f"{k} {m['size']:,} B @ 0x{m['base']:08x}" for k, m in r["memories"].items())
        size = size or f"{r['ram_mb']:,} MB"
        print(f"{pad}{r['arch']} ({r['triple']}), {r['cores']} cores, {size}; {r['cc']} {flags}{cc}")
        if r["features"]:
            print(f"{pad}needs {' '.join(r['features'])}")
        if r["emulator"]:
            emu = "" if r["emulator_installed"] else f"   (missing: apt-get install {r['emulator_package']})"
            print(f"{pad}emulated by {' '.join(r['emulator'][:3])}{emu}")
    hint = "NAME.toml in a folder in $BURNEDGE_TARGETS (see burnedge/targets/rpi4.toml)"
    print(f"{len(rows)} targets; add your own: {hint}")
    return 0


def cmd_emulate(a: argparse.Namespace) -> int:
    from . import bundle
    from .emulate import emulate
    from .targets import resolve

    b = bundle.read(a.bundle, cli_trust.trust_of(a))
    names = a.target or ",".join(b.targets)
    targets = resolve(names, a.targets_dir)
    if a.keep is not None and len(targets) > 1:
        a.keep.mkdir(parents=True, exist_ok=True)
    ok = True
    for t in targets:
        keep = a.keep / t.name if a.keep is not None and len(targets) > 1 else a.keep
        if t.os == "baremetal":
            ok &= _emulate_firmware(b, t, a, keep)
            continue
        r = emulate(b, t, runner=a.runner, threads=a.threads, tolerance=a.tolerance, keep=keep, timeout=a.timeout)
        where = "natively" if r.command[0] == "./runner" else "under " + " ".join(r.command[:3])
        print(f"target     {t.name}: {t.description}, {where}")
        for c in r.checks:
            verdict = "ok" if c.ok else "MISMATCH"
            err = f"max abs error {c.max_abs:.3g}  relative {c.relative:.3g}"
            print(f"vector {c.vector:<3d} {c.output:24s} {err}  {verdict}")
        per_run = ", ".join(f"{us / 1000:.1f}" for us in r.run_us)
        print(f"time       {per_run} ms per vector (emulated), {r.wall_s:.2f} s in all")
        print(f"arena      {r.arena_bytes:,} bytes")
        rule = "bit-exact (an int8 bundle)" if r.exact else f"tolerance {r.tolerance:g} relative"
        print(f"max error  {r.max_abs:.3g} (relative {r.max_relative:.3g}; {rule})")
        if r.folder is not None:
            print(f"kept       {r.folder} (copy it to the board and run: ./runner job.txt)")
        print("PASS" if r.ok else "FAIL")
        ok &= r.ok
    return 0 if ok else 1


def _emulate_firmware(b, t, a: argparse.Namespace, keep: Path | None) -> bool:
    """`emulate` on a microcontroller: the test firmware built and booted in QEMU system mode."""
    from . import firmware

    fw = firmware.emulate(b, t, keep, tolerance=a.tolerance, timeout=a.timeout or 300)
    r = fw.run
    print(f"target     {t.name}: {t.description}, under {' '.join(r.command[:3])}")
    for c in r.checks:
        verdict = "ok" if c.ok else "MISMATCH"
        print(
            f"vector {c.vector:<3d} {c.output:24s} max abs error {c.max_abs:.3g}  relative {c.relative:.3g}  {verdict}"
        )
    print(f"instructions {', '.join(f'{n:,}' for n in r.instructions)} per inference (QEMU -icount)")
    for line in firmware.format_report(fw.report):
        print(line)
    rule = "bit-exact (an int8 bundle)" if r.exact else f"tolerance {r.tolerance:g} relative"
    print(f"max error  {r.max_abs:.3g} ({rule}); the firmware said: {r.verdict}")
    if keep is not None:
        print(f"kept       {fw.folder} (report: {fw.folder / firmware.REPORT})")
    print("PASS" if r.ok else "FAIL")
    return r.ok


def cmd_firmware(a: argparse.Namespace) -> int:
    from . import bundle, firmware
    from .targets import get

    b = bundle.read(a.bundle, cli_trust.trust_of(a))
    fw = firmware.firmware(b, get(a.target, a.targets_dir), a.output, a.template, a.tolerance)
    print(f"target     {fw.target.name}: {fw.target.description}")
    print(f"template   {fw.template}: {fw.folder}")
    print(f"built      {fw.built} (make -C {fw.folder})")
    if fw.report is not None:
        for line in firmware.format_report(fw.report):
            print(line)
        print(
            f"report     {fw.folder / firmware.REPORT}; stack measured by: burnedge emulate --target {fw.target.name}"
        )
    return 0


def add_commands(sub: argparse._SubParsersAction, count: Callable[..., Callable[[str], int]]) -> None:
    """Registers `targets` and `emulate` on the CLI's subparsers (`count`: cli._count, a whole-number type)."""
    dirs = dict(action="append", default=[], type=Path, metavar="DIR", help="also read target files from DIR")

    s = sub.add_parser("targets", help="the boards a bundle can be built for, and what each needs here")
    s.add_argument("--json", action="store_true", help="print one JSON list")
    s.add_argument("--targets-dir", **dirs)
    s.set_defaults(fn=cmd_targets)

    s = sub.add_parser("emulate", help="run a bundle's test vectors for a target under QEMU; PASS or FAIL")
    s.add_argument("bundle", type=Path)
    s.add_argument("--target", metavar="NAME[,NAME...]", help="default: every target the bundle carries")
    s.add_argument("--runner", choices=["qemu", "docker"], default="qemu", help="QEMU user mode (default) or Docker")
    s.add_argument("--threads", type=count("--threads"), default=1, metavar="N")
    s.add_argument("--tolerance", type=float, default=1e-4, help="largest relative error of a float output")
    s.add_argument("--keep", type=Path, metavar="DIR", help="keep the runner's folder (to copy to a board)")
    s.add_argument("--timeout", type=float, metavar="SECONDS", help="give up on a run after this long")
    cli_trust.add_trust_options(s)
    s.add_argument("--targets-dir", **dirs)
    s.set_defaults(fn=cmd_emulate)

    s = sub.add_parser("firmware", help="write and build a microcontroller firmware (or library) of a bundle")
    s.add_argument("bundle", type=Path)
    s.add_argument("--target", required=True, metavar="NAME", help="a bare-metal target: cortex-m3, cortex-m4 ...")
    what = "baremetal: a firmware that runs the bundle's vectors (default); library: drop-in sources"
    s.add_argument("--template", choices=["baremetal", "library"], default="baremetal", help=what)
    s.add_argument("-o", "--output", type=Path, required=True, metavar="DIR")
    s.add_argument("--tolerance", type=float, default=1e-4, help="largest relative error of a float output")
    cli_trust.add_trust_options(s)
    s.add_argument("--targets-dir", **dirs)
    s.set_defaults(fn=cmd_firmware)
