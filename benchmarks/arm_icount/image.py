"""ARM without a board: a bundle's model as a bare-metal AArch64 image, run in QEMU system mode (virt machine,
the board's Cortex-A CPU model) under ``-icount shift=0``, giving exact, deterministic instructions per inference.

An image is the microcontroller firmware's machinery on a Cortex-A: the C backend's firmware sources (model.c,
weights.c, the kernels the model reaches), the shared test runner (firmware_templates/baremetal/main.c: it copies
the test vector in, times one inference, prints the outputs and a verdict) and this folder's AArch64 startup
(startup.S, startup.c, semihost.h, link.ld, Makefile). The runner's clock is PMCCNTR_EL0, which QEMU derives from
its virtual clock: under -icount shift=0 one instruction is one tick, so the count does not depend on the load of
the machine running QEMU (qemu-user has no such clock). burnedge.firmware.run checks the outputs against the
bundle's references (bit-exact for int8) and reads the instructions back.

A variant is a board with one kernel choice, compiled as the board's Linux library is (-O3, the board's -mcpu):
``portable`` the reference C kernels alone (-DBURNEDGE_PORTABLE; the compiler still vectorises them), ``neon`` the
ARM set without the dot product, ``dotprod`` the ARM set with sdot (rpi5: -mcpu=cortex-a76; its neon variant is
-mcpu=cortex-a76+nodotprod, so that no sdot is compiled in). QEMU's CPU model is the board's: an instruction the
core lacks (sdot on the A72) traps, and the run fails.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from burnedge import backends
from burnedge.bundle import Bundle
from burnedge.files import write_atomic
from burnedge.firmware.make import build
from burnedge.firmware.run import Run, run
from burnedge.firmware.sources import TEMPLATE_DIR, vectors_source
from burnedge.targets import Emulator, Memory, Target, get

__all__ = ["BOARDS", "VARIANTS", "image", "measure", "metal_target", "step_profile"]

HERE = Path(__file__).resolve().parent
HARNESS = ("startup.S", "startup.c", "profile.c", "semihost.h", "link.ld", "Makefile")
BOARDS = {"rpi4": "cortex-a72", "rpi5": "cortex-a76"}  # board -> QEMU's CPU model (and gcc's -mcpu)
# (board, kernels) -> the flags replacing the board's -mcpu
VARIANTS: dict[tuple[str, str], tuple[str, ...]] = {
    ("rpi4", "portable"): ("-mcpu=cortex-a72", "-DBURNEDGE_PORTABLE"),
    ("rpi4", "neon"): ("-mcpu=cortex-a72",),
    ("rpi5", "portable"): ("-mcpu=cortex-a76", "-DBURNEDGE_PORTABLE"),
    ("rpi5", "neon"): ("-mcpu=cortex-a76+nodotprod",),
    ("rpi5", "dotprod"): ("-mcpu=cortex-a76",),
}
RAM_BASE, RAM_SIZE = 0x40100000, 0x3FF00000  # link.ld: virt's RAM after the first MiB (QEMU's device tree)


def metal_target(board: str, kernels: str) -> Target:
    """The bare-metal twin of Linux target `board` built with `kernels` (VARIANTS), run on QEMU's virt machine."""
    t = get(board)
    flags = (*(f for f in t.flags if not f.startswith("-mcpu=")), "-O3", *VARIANTS[(board, kernels)])
    qemu = ("qemu-system-aarch64", "-machine", "virt", "-cpu", BOARDS[board], "-m", "1024")
    return dataclasses.replace(
        t,
        name=f"{board}-{kernels}-metal",
        os="baremetal",
        flags=flags,
        memories=(Memory("flash", RAM_BASE, RAM_SIZE // 2), Memory("ram", RAM_BASE + RAM_SIZE // 2, RAM_SIZE // 2)),
        emulator=Emulator(qemu, package="qemu-system-arm", clock_hz=1_000_000_000),
        stack_bytes=1 << 20,
    )


def image(b: Bundle, target: Target, folder: Path, profile: bool = False) -> Path:
    """Writes the image's folder for `b` on `target` (a metal_target) and builds image.elf in it; `profile`: the
    image first runs the plan step by step, printing each step's instructions (profile.c)."""
    if folder.exists():
        shutil.rmtree(folder)
    files = dict(backends.lookup(b.backend).firmware_sources(b, target))
    if profile:
        files["model.c"] = files["model.c"].replace(b"static uint8_t be_arena[", b"uint8_t be_arena[", 1)
        files["config.mk"] += b"CFLAGS += -DBE_STEP_PROFILE\n"
    vc, vh = vectors_source(b)
    files.update({"vectors.c": vc.encode(), "vectors.h": vh.encode()})
    files["main.c"] = (TEMPLATE_DIR / "baremetal" / "main.c").read_bytes()
    files.update({name: (HERE / name).read_bytes() for name in HARNESS})
    for name, data in sorted(files.items()):
        write_atomic(folder / name, data)
    return build(folder, target, goal="image.elf")


def measure(b: Bundle, board: str, kernels: str, folder: Path, timeout: float = 600, profile: bool = False) -> Run:
    """One emulated inference of `b` on `board` with `kernels`: the Run (outputs checked, instructions)."""
    target = metal_target(board, kernels)
    return run(b, target, image(b, target, folder, profile), timeout=timeout)


def step_profile(b: Bundle, r: Run) -> list[tuple[int, str, str, int]]:
    """(step, name, op, instructions) of a profiled Run, the costliest first."""
    steps = {s["index"]: s for s in b.plan["steps"]}
    rows = []
    for line in r.log.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "step":
            s = steps.get(int(parts[1]), {})
            rows.append((int(parts[1]), s.get("name", "?"), "+".join(s.get("ops", [s.get("op", "?")])), int(parts[2])))
    return sorted(rows, key=lambda row: -row[3])
