"""Compiling: the kernel library once per toolchain (a static archive), then each model's source linked with it.

Both are cached by content hash under the cache folder ($BURNEDGE_CACHE, else ~/.cache/burnedge): the key is
the sources, the compiler and its flags, so a changed kernel or flag never reuses a stale build. Every file is
written under a temporary name and renamed into place, so an interrupted build leaves nothing half-written.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
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


def kernel_sources() -> dict[str, str]:
    """File name -> text of the kernel library (the header and every kernels/*.c)."""
    return {p.name: p.read_text() for p in sorted(KERNEL_DIR.iterdir()) if p.suffix in (".c", ".h")}


def _run(cmd: list[str], what: str) -> None:
    if shutil.which(cmd[0]) is None:
        raise BuildError(f"C compiler {cmd[0]!r} not found: install gcc (Debian: apt-get install gcc) or set CC")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-25:])
        raise BuildError(f"compiling {what} failed ({' '.join(cmd[:3])} ...):\n{tail}")


def _place(tmp: Path, final: Path) -> Path:
    os.replace(tmp, final)
    return final


def kernel_library(tc: Toolchain) -> Path:
    """The static kernel archive for `tc`, built on first use."""
    sources = kernel_sources()
    digest = hashlib.sha256((tc.key() + repr(sorted(sources.items()))).encode()).hexdigest()[:20]
    lib = cache_dir() / f"libburnedge_kernels-{tc.name}-{digest}.a"
    if lib.exists():
        return lib
    with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
        objs = []
        for name in sources:
            if name.endswith(".c"):
                obj = Path(tmp) / (name[:-2] + ".o")
                _run(
                    [tc.cc, *tc.cflags, "-I", str(KERNEL_DIR), "-c", str(KERNEL_DIR / name), "-o", str(obj)],
                    f"kernel {name}",
                )
                objs.append(str(obj))
        archive = Path(tmp) / "lib.a"
        _run([tc.ar, "rcs", str(archive), *objs], "the kernel archive")
        return _place(archive, lib)


def build_model(source: str, tc: Toolchain | None = None) -> Path:
    """A shared library of a generated model source, linked with the kernel library; cached by content."""
    tc = tc or host_toolchain()
    lib = kernel_library(tc)
    digest = hashlib.sha256((lib.name + tc.key() + source).encode()).hexdigest()[:24]
    out = cache_dir() / f"model-{tc.name}-{digest}.so"
    if out.exists():
        return out
    with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
        src = Path(tmp) / "model.c"
        src.write_text(source)
        so = Path(tmp) / "model.so"
        _run(
            [tc.cc, *tc.cflags, "-shared", "-I", str(KERNEL_DIR), str(src), str(lib), "-o", str(so), *tc.ldflags],
            "the model",
        )
        return _place(so, out)
