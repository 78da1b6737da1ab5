"""The standalone runner: runner/runner.c compiled for a target, a program that runs a job folder of a bundle's
test vectors with its library, no Python needed (burnedge.emulate stages the folder and reads the results)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ...files import temp_folder
from ...targets import Target
from .build import _run, cache_dir
from .cross import toolchain

__all__ = ["RUNNER_SOURCE", "runner_binary"]

RUNNER_SOURCE = Path(__file__).parent / "runner" / "runner.c"


def runner_binary(target: Target) -> Path:
    """The runner compiled for `target` (cached by the source, compiler and flags)."""
    tc = toolchain(target)
    flags = [f for f in tc.cflags if f not in ("-fPIC", "-O3")]
    source = RUNNER_SOURCE.read_text()
    digest = hashlib.sha256((tc.key() + source).encode()).hexdigest()[:20]
    out = cache_dir() / "runners" / f"runner-{target.name}-{digest}"
    if out.is_file():
        return out
    with temp_folder(out) as tmp:
        exe = Path(tmp) / "runner"
        # DT_RPATH $ORIGIN (not RUNPATH): libraries next to the runner serve the model library's needs too
        rpath = "-Wl,--disable-new-dtags,-rpath,$ORIGIN"
        _run([tc.cc, "-O2", *flags, str(RUNNER_SOURCE), "-o", str(exe), rpath, "-ldl", "-lm"], "the runner", tc.package)
        exe.replace(out)
    return out
