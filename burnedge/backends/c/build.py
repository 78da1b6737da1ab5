"""Compiling: the kernel library once per toolchain (a static archive), then each model's source linked with it.

Both are cached by content hash under the cache folder ($BURNEDGE_CACHE, else ~/.cache/burnedge): the key is
the sources, the compiler and its flags, so a changed kernel or flag never reuses a stale build. Every file is
written under a temporary name and renamed into place, so an interrupted build leaves nothing half-written.

A toolchain is the host's (`host_toolchain`: -march=native) or a target's (`burnedge.targets.Target.toolchain`:
a cross compiler with the board's flags). The kernels come from this package (KERNEL_DIR) or from another folder
(`kernel_dir`: a bundle's own kernels, so it can be rebuilt exactly as it was exported).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import BurnedgeError

__all__ = ["KERNEL_DIR", "BuildError", "Toolchain", "build_model", "cache_dir", "host_toolchain", "kernel_sources"]

KERNEL_DIR = Path(__file__).parent / "kernels"


class BuildError(BurnedgeError):
    """The C compiler is missing or rejected a source."""


@dataclass(frozen=True)
class Toolchain:
    """A compiler and its flags for one target."""

    cc: str
    cflags: tuple[str, ...]
    ldflags: tuple[str, ...] = ("-lm",)
    ar: str = "ar"
    name: str = "host"
    env: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    package: str = field(default="gcc", compare=False)  # the Debian package that installs `cc`

    def key(self) -> str:
        return hashlib.sha256(repr((self.cc, self.cflags, self.ldflags, self.name)).encode()).hexdigest()[:16]


def host_toolchain() -> Toolchain:
    """The machine's own compiler ($CC or cc), optimising for this very CPU."""
    cc = os.environ.get("CC", "cc")
    flags = (
        "-O3",
        "-march=native",
        "-std=c11",
        "-fPIC",
        "-fopenmp",
        "-Wall",
        "-Wno-unused-function",
        "-Wno-unused-variable",
        "-Wno-unused-but-set-variable",
    )
    return Toolchain(cc, flags, ("-lm", "-fopenmp"))


def cache_dir() -> Path:
    root = Path(os.environ.get("BURNEDGE_CACHE") or Path.home() / ".cache" / "burnedge")
    root.mkdir(parents=True, exist_ok=True)
    return root


def kernel_sources(kernel_dir: Path | None = None) -> dict[str, str]:
    """File name -> text of the kernel library (the header and every *.c) in `kernel_dir` (default KERNEL_DIR)."""
    folder = Path(kernel_dir or KERNEL_DIR)
    return {p.name: p.read_text() for p in sorted(folder.iterdir()) if p.suffix in (".c", ".h")}


def _run(cmd: list[str], what: str, package: str = "gcc") -> None:
    if shutil.which(cmd[0]) is None:
        fix = "or set CC" if package == "gcc" else "or choose another target"
        raise BuildError(f"C compiler {cmd[0]!r} not found: install it (Debian: apt-get install {package}) {fix}")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-25:])
        raise BuildError(f"compiling {what} failed ({' '.join(cmd[:3])} ...):\n{tail}")


def _place(tmp: Path, final: Path) -> Path:
    os.replace(tmp, final)
    return final


def kernel_library(tc: Toolchain, kernel_dir: Path | None = None) -> Path:
    """The static kernel archive for `tc` (of the kernels in `kernel_dir`, default KERNEL_DIR), built on first use."""
    folder = Path(kernel_dir or KERNEL_DIR)
    sources = kernel_sources(folder)
    digest = hashlib.sha256((tc.key() + repr(sorted(sources.items()))).encode()).hexdigest()[:20]
    lib = cache_dir() / f"libburnedge_kernels-{tc.name}-{digest}.a"
    if lib.exists():
        return lib
    with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
        src = Path(tmp) / "src"  # NOTE: the very texts hashed above, even if the folder changes meanwhile
        src.mkdir()
        for name, text in sources.items():
            (src / name).write_text(text)

        def compile_one(name: str) -> str:
            obj = Path(tmp) / (name[:-2] + ".o")
            cmd = [tc.cc, *tc.cflags, "-I", str(src), "-c", str(src / name), "-o", str(obj)]
            _run(cmd, f"kernel {name}", tc.package)
            return str(obj)

        with ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1))) as pool:  # one gcc per core
            objs = list(pool.map(compile_one, [n for n in sources if n.endswith(".c")]))
        archive = Path(tmp) / "lib.a"
        _run([tc.ar, "rcs", str(archive), *objs], "the kernel archive", tc.package)
        return _place(archive, lib)


def build_model(source: str, tc: Toolchain | None = None, kernel_dir: Path | None = None) -> Path:
    """A shared library of a generated model source, linked with the kernel library (of `kernel_dir`, default
    KERNEL_DIR) built by `tc` (default: the host's); cached by content."""
    tc = tc or host_toolchain()
    folder = Path(kernel_dir or KERNEL_DIR)
    lib = kernel_library(tc, folder)
    digest = hashlib.sha256((lib.name + tc.key() + source).encode()).hexdigest()[:24]
    out = cache_dir() / f"model-{tc.name}-{digest}.so"
    if out.exists():
        return out
    with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
        src = Path(tmp) / "model.c"
        src.write_text(source)
        so = Path(tmp) / "model.so"
        _run(
            [tc.cc, *tc.cflags, "-shared", "-I", str(folder), str(src), str(lib), "-o", str(so), *tc.ldflags],
            "the model",
            tc.package,
        )
        return _place(so, out)
