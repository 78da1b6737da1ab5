"""Compiling: the kernel library once per toolchain (a static archive), then each model's source linked with it.

Both are cached by content hash under the cache folder ($BURNEDGE_CACHE, else ~/.cache/burnedge): the key is
the sources, the compiler and its flags, so a changed kernel or flag never reuses a stale build. Every file is
written under a temporary name and renamed into place, so an interrupted build leaves nothing half-written.

A toolchain is the host's (`host_toolchain`: -march=native) or a target's (`cross.toolchain`: a cross compiler
with the board's flags and the kernel sets its TOML names). The kernels come from this package (KERNEL_DIR) or
from another folder (`kernel_dir`: a bundle's own kernels, so it can be rebuilt exactly as it was exported).

The kernel library is organised in sets (KERNEL_DIR)::

    kernels/*.h         the public headers: what generated model code includes (no ISA in them)
    kernels/reference/  the portable C99 kernels, every one (the C spec of each kernel), isa.h (the one place
                        that reads the compiler's ISA macros) and *_loops.h: the loops a kernel's sets share
    kernels/x86/        AVX2 + FMA versions of some of them
    kernels/arm/        NEON versions (aarch64 and armv7; sdot where the compiler has dotprod)
    kernels/cortex_m*/  Cortex-M: cortex_m (integer depthwise for FPU-less cores: M3), cortex_m_dsp (SMLAD: M4, M7,
                        M33), cortex_m_mve (Helium: M55, over cortex_m_dsp)

A toolchain builds the reference set and the optimised sets it names (`Toolchain.kernel_sets`,
`kernel_sets_for`): a set's `gemm.c` replaces reference/gemm.c, file by file (it defines what differs and
includes reference/gemm_loops.h for the rest); internal headers have names of their own (x86_dense.h,
arm_qgemm.h ...), so `kernel_sources` flattens the chosen sets into one folder's files. A flat folder (a bundle's
kernels) is one set already.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ... import host, limits
from ...errors import BurnedgeError
from ...files import temp_folder
from .diagnostics import diagnostics

__all__ = [
    "KERNEL_DIR",
    "REFERENCE",
    "BuildError",
    "Toolchain",
    "build_model",
    "build_object",
    "cache_dir",
    "host_toolchain",
    "kernel_library",
    "kernel_sets_for",
    "kernel_sources",
]

KERNEL_DIR = Path(__file__).parent / "kernels"
REFERENCE = "reference"  # the portable set every build starts from
PORTABLE_FLAG = "-DBURNEDGE_PORTABLE"  # in a toolchain's flags: the reference set alone


class BuildError(BurnedgeError):
    """The C compiler is missing or rejected a source."""


def kernel_sets_for(arch: str, features: Iterable[str]) -> tuple[str, ...]:
    """The kernel sets for a CPU: its architecture (`uname -m` or a target's `arch`) and its features as Linux
    names them (/proc/cpuinfo flags or HWCAP names): x86 with avx2 and fma -> x86; aarch64 or armv7 with NEON
    (asimd, neon) -> arm; always on top of the reference set."""
    arch, have = arch.lower(), {f.lower() for f in features}
    if arch in ("x86_64", "amd64", "x86", "i386", "i686") and {"avx2", "fma"} <= have:
        return (REFERENCE, "x86")
    if arch in ("aarch64", "arm64") or arch.startswith("arm"):
        if have & {"asimd", "neon"}:
            return (REFERENCE, "arm")
    return (REFERENCE,)


@dataclass(frozen=True)
class Toolchain:
    """A compiler and its flags for one target, and the kernel sets it builds (empty: what `cc` with `cflags`
    compiles, asked of the compiler; -DBURNEDGE_PORTABLE in the flags: the reference set alone)."""

    cc: str
    cflags: tuple[str, ...]
    ldflags: tuple[str, ...] = ("-lm",)
    ar: str = "ar"
    name: str = "host"
    env: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    package: str = field(default="gcc", compare=False)  # the Debian package that installs `cc`
    kernel_sets: tuple[str, ...] = ()

    def key(self) -> str:
        return hashlib.sha256(repr((self.cc, self.cflags, self.ldflags, self.name)).encode()).hexdigest()[:16]

    def sets(self) -> tuple[str, ...]:
        """The kernel sets this toolchain builds, the reference set first."""
        if PORTABLE_FLAG in self.cflags:
            return (REFERENCE,)
        chosen = self.kernel_sets or _compiler_sets(self.cc, self.cflags)
        return chosen if chosen[:1] == (REFERENCE,) else (REFERENCE, *chosen)


def host_toolchain() -> Toolchain:
    """The machine's own compiler ($CC or cc), optimising for this very CPU, with the kernel sets it has."""
    cc = os.environ.get("CC", "cc")
    flags = (
        "-O3",
        "-march=native",
        "-std=c11",
        "-fPIC",
        "-pthread",
        "-Wall",
        "-Wno-unused-function",
        "-Wno-unused-variable",
        "-Wno-unused-but-set-variable",
    )
    sets = kernel_sets_for(host.machine(), host.features())
    return Toolchain(cc, flags, ("-lm", "-pthread"), kernel_sets=sets)


@functools.cache
def _compiler_sets(cc: str, cflags: tuple[str, ...]) -> tuple[str, ...]:
    """The kernel sets `cc` with `cflags` can build, from the ISA macros it predefines (the ones isa.h reads);
    without a working compiler, a guess from its name (aarch64-/arm-: arm, else the reference set)."""
    try:
        proc = subprocess.run([cc, *cflags, "-dM", "-E", "-x", "c", os.devnull], capture_output=True, text=True)
        macros = {line.split()[1] for line in proc.stdout.splitlines() if line.startswith("#define ")}
        ok = proc.returncode == 0
    except OSError:
        ok, macros = False, set()
    if not ok:
        base = Path(cc).name
        return (REFERENCE, "arm") if base.startswith(("aarch64", "arm")) else (REFERENCE,)
    if {"__AVX2__", "__FMA__"} <= macros:
        return (REFERENCE, "x86")
    if "__ARM_NEON" in macros:
        return (REFERENCE, "arm")
    return (REFERENCE,)


def cache_dir() -> Path:
    root = Path(os.environ.get("BURNEDGE_CACHE") or Path.home() / ".cache" / "burnedge")
    root.mkdir(parents=True, exist_ok=True)
    return root


def kernel_sources(sets: Sequence[str] = (REFERENCE,), kernel_dir: Path | None = None) -> dict[str, str]:
    """File name -> text of the kernel library of `sets` in `kernel_dir` (default KERNEL_DIR), flattened: the
    public headers, then each set's sources and internal headers, a later set's file replacing the earlier one of
    the same name (gemm.c). A folder without set subfolders (a bundle's kernels) is taken whole."""
    folder = Path(kernel_dir or KERNEL_DIR)

    def files(where: Path) -> dict[str, str]:
        return {p.name: p.read_text() for p in sorted(where.iterdir()) if p.suffix in (".c", ".h") and p.is_file()}

    if not (folder / REFERENCE).is_dir():
        return files(folder)
    out = files(folder)  # the public headers
    origin = dict.fromkeys(out, "kernels/")
    for s in dict.fromkeys((REFERENCE, *sets)):
        where = folder / s
        if s.startswith(".") or "/" in s or not where.is_dir():
            known = sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
            raise BuildError(f"unknown kernel set {s!r} (kernel sets in {folder}: {', '.join(known)})")
        for name, text in files(where).items():
            if name in out and not (name.endswith(".c") and origin[name] != "kernels/"):
                raise BuildError(f"kernel file {s}/{name} has the name of {origin[name]}{name}: give it its own")
            out[name], origin[name] = text, f"{s}/"
    return out


def _run(cmd: list[str], what: str, package: str = "gcc", sources: Sequence[Path] = ()) -> None:
    """Runs a compiler command; a failure is a BuildError with the end of its diagnostics (with `sources`, only
    those about files in these folders: see diagnostics)."""
    if shutil.which(cmd[0]) is None:
        fix = "or set CC" if package == "gcc" else "or choose another target"
        raise BuildError(f"C compiler {cmd[0]!r} not found: install it (Debian: apt-get install {package}) {fix}")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = diagnostics(proc.stderr, sources) if sources else proc.stderr.strip().splitlines()
        tail = "\n".join(lines[-25:])
        raise BuildError(f"compiling {what} failed ({' '.join(cmd[:3])} ...):\n{tail}")


def _place(tmp: Path, final: Path) -> Path:
    os.replace(tmp, final)
    return final


def kernel_library(tc: Toolchain, kernel_dir: Path | None = None) -> Path:
    """The static kernel archive for `tc` (of its kernel sets in `kernel_dir`, default KERNEL_DIR), built on first
    use."""
    sources = kernel_sources(tc.sets(), kernel_dir)
    digest = hashlib.sha256((tc.key() + repr(sorted(sources.items()))).encode()).hexdigest()[:20]
    lib = cache_dir() / f"libburnedge_kernels-{tc.name}-{digest}.a"
    if lib.exists():
        return lib
    with temp_folder(lib) as tmp:
        src = Path(tmp) / "src"  # NOTE: the very texts hashed above, even if the folder changes meanwhile
        src.mkdir()
        for name, text in sources.items():
            (src / name).write_text(text)

        def compile_one(name: str) -> str:
            obj = Path(tmp) / (name[:-2] + ".o")
            cmd = [tc.cc, *tc.cflags, "-I", str(src), "-c", str(src / name), "-o", str(obj)]
            _run(cmd, f"kernel {name}", tc.package, (src,))
            return str(obj)

        with ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1))) as pool:  # one gcc per core
            objs = list(pool.map(compile_one, [n for n in sources if n.endswith(".c")]))
        archive = Path(tmp) / "lib.a"
        _run([tc.ar, "rcs", str(archive), *objs], "the kernel archive", tc.package)
        return _place(archive, lib)


def build_model(source: str, tc: Toolchain | None = None, kernel_dir: Path | None = None) -> Path:
    """A shared library of a generated model source, linked with the kernel library (of `kernel_dir`, default
    KERNEL_DIR) built by `tc` (default: the host's); cached by content. The model includes the public headers
    only: the top of `kernel_dir`."""
    limits.check("max_source_bytes", len(source.encode()), "the generated C source of the model")
    tc = tc or host_toolchain()
    folder = Path(kernel_dir or KERNEL_DIR)
    lib = kernel_library(tc, folder)
    digest = hashlib.sha256((lib.name + tc.key() + source).encode()).hexdigest()[:24]
    out = cache_dir() / f"model-{tc.name}-{digest}.so"
    if out.exists():
        return out
    with temp_folder(out) as tmp:
        src = Path(tmp) / "model.c"
        src.write_text(source)
        so = Path(tmp) / "model.so"
        _run(
            [tc.cc, *tc.cflags, "-shared", "-I", str(folder), str(src), str(lib), "-o", str(so), *tc.ldflags],
            "the model",
            tc.package,
            (Path(tmp), folder),
        )
        return _place(so, out)


def build_object(source: str, tc: Toolchain) -> Path:
    """An object file of a generated model source compiled by `tc` (a microcontroller's: firmware links it with
    the kernels it calls); cached by content."""
    limits.check("max_source_bytes", len(source.encode()), "the generated C source of the model")
    digest = hashlib.sha256((tc.key() + source).encode()).hexdigest()[:24]
    out = cache_dir() / f"model-{tc.name}-{digest}.o"
    if out.exists():
        return out
    with temp_folder(out) as tmp:
        src = Path(tmp) / "model.c"
        src.write_text(source)
        obj = Path(tmp) / "model.o"
        _run([tc.cc, *tc.cflags, "-I", str(KERNEL_DIR), "-c", str(src), "-o", str(obj)], "the model", tc.package)
        return _place(obj, out)
