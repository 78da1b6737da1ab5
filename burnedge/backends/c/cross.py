"""The C backend and the boards: a target's toolchain, its library's manifest row, and which row loads here.

A target (burnedge.targets) is data; this module turns it into a compiler with flags (`toolchain`), describes a
library built with it (`library_row`: what a machine needs to load it), and picks, among a bundle's rows, the one
that runs on this machine (`pick_library`).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from typing import Any

from ... import host
from ...errors import BundleError
from ...targets import Target, TargetError
from .build import REFERENCE, Toolchain, host_toolchain, kernel_sets_for

__all__ = ["BAREMETAL_FLAGS", "library_row", "pick_library", "toolchain"]

# a microcontroller's build: no shared objects (-fPIC), one section per function and datum so the linker keeps only
# what the model reaches; BE_BAREMETAL leaves out what needs an OS (the worker pool's threads: one thread; the step
# profiler's clock)
BAREMETAL_FLAGS = (
    "-O2",
    "-std=c11",
    "-ffunction-sections",
    "-fdata-sections",
    "-Wall",
    "-Wno-unused-function",
    "-Wno-unused-variable",
    "-Wno-unused-but-set-variable",
    "-Wno-unknown-pragmas",
    "-DBE_BAREMETAL",
)


def toolchain(target: Target) -> Toolchain:
    """The compiler for `target`; a missing cross compiler is an error naming the package to install."""
    if target.native:
        return host_toolchain()
    for tool in (target.cc, target.ar):
        if shutil.which(tool) is None:
            raise TargetError(
                f"target {target.name!r} ({target.path}): the cross compiler {tool!r} is not installed; "
                f"install it with: apt-get install {target.package}"
            )
    if target.os == "baremetal":
        return Toolchain(
            target.cc,
            (*BAREMETAL_FLAGS, *target.flags),
            ("-lm", *target.ldflags),
            target.ar,
            target.name,
            package=target.package,
            kernel_sets=target.kernels or (REFERENCE,),
        )
    base = tuple(f for f in host_toolchain().cflags if not f.startswith(("-march=", "-mcpu=", "-mtune=")))
    return Toolchain(
        target.cc,
        (*base, *target.flags),
        ("-lm", "-pthread", *target.ldflags),
        target.ar,
        target.name,
        package=target.package,
        kernel_sets=target.kernels or kernel_sets_for(target.arch, target.features),
    )


def library_row(target: Target, path: str) -> dict[str, Any]:
    """The manifest's row for `target`'s library at `path`: where it is and what a machine needs to load it."""
    tc = toolchain(target)
    if target.native:
        where: dict[str, Any] = {**host.fingerprint(), "triple": target.triple}
    elif target.os == "baremetal":
        where = {"system": "baremetal", "machine": target.arch, "triple": target.triple,
                 "requires": list(target.features)}  # fmt: skip
    else:
        where = {"system": "Linux", "machine": target.arch, "triple": target.triple, "requires": list(target.features)}
    return {"path": path, **where, "cc": tc.cc, "cflags": list(tc.cflags)}


def pick_library(libraries: Iterable[dict[str, Any]], here: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The manifest row of the library to load on this machine (`here`: host.fingerprint()): one built for this
    very CPU, else the cross-compiled one with the most required features among those whose triple and features
    this machine has; None when none runs here. A row must say what runs it: a row that names neither the CPU it
    was built for (`cpu`) nor the features it requires (`requires`), or a -march=native build without `cpu`, is
    an error (such a row would load on any machine of its architecture, and crash where the CPU differs)."""
    here = here if here is not None else host.fingerprint()
    best, rank = None, -1
    for lib in libraries:
        _check_row(lib)
        if "cpu" in lib:  # -march=native: exactly this instruction set
            fits, score = all(lib.get(k) == v for k, v in here.items()), 1 << 20
        else:
            requires = set(lib.get("requires", ()))
            fits = lib.get("system") == here["system"] and lib.get("triple") == host.triple()
            fits = fits and requires <= host.features()
            score = len(requires)
        if fits and score > rank:
            best, rank = lib, score
    return best


def _check_row(lib: dict[str, Any]) -> None:
    """Refuses a library row that does not say which machines it runs on (see pick_library)."""
    native = any(str(f).endswith("=native") for f in lib.get("cflags", ()))
    if "cpu" not in lib and (native or not isinstance(lib.get("requires"), list)):
        what = "was built for one CPU (-march=native)" if native else "names no CPU features it requires"
        raise BundleError(
            f"the library row for {lib.get('path')!r} {what} but carries no CPU fingerprint (`cpu`); refusing to "
            "guess which machines it runs on (export the model again)"
        )
