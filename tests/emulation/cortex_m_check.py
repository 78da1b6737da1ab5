"""Builds and runs the Cortex-M kernel checks (cortex_m/kernel_check.c): one bare-metal ELF per core with the
core's kernel sets beside a second, ref_-prefixed copy of the reference kernels, run under qemu-system-arm with
semihosting; and the same program built for the host with the reference set on both sides, whose hashes of the
reference outputs each core's must equal."""

from __future__ import annotations

import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from burnedge.backends.c import build

HERE = Path(__file__).parent / "cortex_m"
CHECKED = ("qgemm.c", "qgemv.c", "qconv.c", "qconv_nhwc.c", "qconv_dw_nhwc.c")  # the kernels kernel_check.c calls
PUBLIC = (  # their public names, prefixed ref_ in the reference copy
    "be_qgemm_i8", "be_qgemv_i8", "be_qgemm_tile", "be_qgemm_panel", "be_qconv2d_i8", "be_qconv_nhwc_i8",
    "be_qdwconv_nhwc_i8",
)  # fmt: skip


@dataclass(frozen=True)
class Core:
    machine: str  # QEMU -M
    flags: tuple[str, ...]
    rom: tuple[int, int]  # base, size: code and constants
    ram: tuple[int, int]  # data, bss, stack
    sets: tuple[str, ...]  # the optimised kernel sets it builds


_M2 = ((0x0, 0x400000), (0x20000000, 0x400000))
_DSP = ("cortex_m_dsp",)
CORES = {
    "cortex-m3": Core("mps2-an385", ("-mcpu=cortex-m3", "-mfloat-abi=soft"), *_M2, ("cortex_m",)),
    "cortex-m4": Core("mps2-an386", ("-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"), *_M2, _DSP),
    "cortex-m7": Core("mps2-an500", ("-mcpu=cortex-m7", "-mfpu=fpv5-d16", "-mfloat-abi=hard"), *_M2, _DSP),
    "cortex-m33": Core(
        "mps2-an505", ("-mcpu=cortex-m33", "-mfpu=fpv5-sp-d16", "-mfloat-abi=hard"), (0x10000000, 0x400000),
        (0x38000000, 0x200000), _DSP,
    ),
    "cortex-m55": Core(
        "mps3-an547", ("-mcpu=cortex-m55", "-mfloat-abi=hard"), (0x10000000, 0x80000), (0x11000000, 0x200000),
        ("cortex_m_dsp", "cortex_m_mve"),
    ),
}  # fmt: skip
CC = "arm-none-eabi-gcc"
COMMON = ("-O2", "-std=c11", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-Wno-unused-function")


def _flatten(sets: tuple[str, ...], where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    for name, text in build.kernel_sources(sets).items():
        (where / name).write_text(text)
    return where


def _sources(tmp: Path, sets: tuple[str, ...]) -> list[str]:
    """Compiler arguments: the checked kernels of `sets` and of the reference renamed ref_ (own include paths)."""
    opt, ref = _flatten(sets, tmp / "opt"), _flatten((), tmp / "ref")
    renames = [f"-D{name}=ref_{name[3:]}" for name in PUBLIC]
    return [str(opt / c) for c in CHECKED], [str(ref / c) for c in CHECKED], opt, renames


def build_core(core: str, tmp: Path, cases: int) -> Path:
    """The check's ELF for `core`."""
    c = CORES[core]
    opt, ref, inc, renames = _sources(tmp, c.sets)
    script = (HERE / "link.ld.in").read_text()
    for key, value in (("ROM_BASE", c.rom[0]), ("ROM_SIZE", c.rom[1]), ("RAM_BASE", c.ram[0]), ("RAM_SIZE", c.ram[1])):
        script = script.replace(f"@{key}@", hex(value))
    (tmp / "link.ld").write_text(script)
    flags = [*COMMON, "-mthumb", *c.flags, "-ffunction-sections", "-fdata-sections", f"-DCASES={cases}"]
    units = [(s, [], inc) for s in opt] + [(s, renames, tmp / "ref") for s in ref]
    units += [(str(HERE / "kernel_check.c"), [], inc), (str(HERE / "startup.c"), [], inc)]
    units += [(str(inc / "workers.c"), ["-DBE_BAREMETAL"], inc)]  # be_parallel: the caller alone

    def compile_one(i: int) -> str:
        src, extra, inc_dir = units[i]
        obj = tmp / f"{i}.o"
        subprocess.run([CC, *flags, *extra, f"-I{inc_dir}", "-c", src, "-o", str(obj)], check=True)
        return str(obj)

    with ThreadPoolExecutor(max_workers=2) as pool:
        objs = list(pool.map(compile_one, range(len(units))))
    elf = tmp / f"{core}.elf"
    subprocess.run(
        [CC, *flags, "-nostartfiles", "--specs=nano.specs", "--specs=nosys.specs", f"-T{tmp / 'link.ld'}",
         "-Wl,--gc-sections", *objs, "-o", str(elf)], check=True,
    )  # fmt: skip
    return elf


def run_core(core: str, elf: Path, timeout: float = 120.0, icount: bool = False) -> str:
    cmd = ["qemu-system-arm", "-M", CORES[core].machine, "-semihosting", "-nographic", "-monitor", "none",
           "-serial", "none", "-kernel", str(elf)]  # fmt: skip
    if icount:
        cmd[1:1] = ["-icount", "shift=0"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return proc.stdout + proc.stderr


def host_lines(tmp: Path, cases: int) -> str:
    """The host's output: the reference set on both sides."""
    cc = os.environ.get("CC") or shutil.which("cc") or "gcc"
    _, ref, _, renames = _sources(tmp, ())
    exe = tmp / "host_check"
    objs = []  # the ref_ names: a second copy of the reference objects, renamed
    for i, src in enumerate(ref):
        obj = tmp / f"h{i}.o"
        subprocess.run([cc, *COMMON, *renames, f"-I{tmp / 'ref'}", "-c", src, "-o", str(obj)], check=True)
        objs.append(str(obj))
    pool = tmp / "workers.o"  # be_parallel, one thread like the microcontroller's
    pool_src = str(tmp / "ref" / "workers.c")
    subprocess.run([cc, *COMMON, "-DBE_BAREMETAL", f"-I{tmp / 'ref'}", "-c", pool_src, "-o", str(pool)], check=True)
    objs.append(str(pool))
    subprocess.run([cc, *COMMON, "-DCM_HOST", f"-DCASES={cases}", f"-I{tmp / 'ref'}", str(HERE / "kernel_check.c"),
                    *ref, *objs, "-o", str(exe), "-lm"], check=True)  # fmt: skip
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=60).stdout


def assembly(core: str, tmp: Path, source: str = "qgemm.c") -> str:
    """The compiler's assembly of one kernel file of `core`'s sets (objdump 2.40 does not decode MVE)."""
    c = CORES[core]
    opt = _flatten(c.sets, tmp / "asm")
    flags = [*COMMON, "-mthumb", *c.flags]
    return subprocess.run([CC, *flags, f"-I{opt}", "-S", str(opt / source), "-o", "-"], capture_output=True,
                          text=True, check=True).stdout  # fmt: skip
