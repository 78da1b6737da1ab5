"""Backends, found by directory convention: `get("numpy")` imports burnedge.backends.numpy.

A name may wrap another backend in a decorator (burnedge.backends.wrappers), as Burn composes its backends:
`checked<c>` runs every step on the C backend and on the numpy reference and stops at the first difference;
`profiled<c>` times every step. Decorators nest: `profiled<checked<c>>`.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

from ..errors import BurnedgeError
from .base import Artifacts, Backend, Executable, Library
from .wrappers import WRAPPERS

__all__ = ["Artifacts", "Backend", "Executable", "Library", "available", "get", "lookup", "names"]

_WRAPPED = re.compile(r"^(\w+)<(.+)>$")


def names() -> list[str]:
    """Every backend package burnedge ships, available here or not."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg)


def lookup(name: str) -> Backend:
    """The backend called `name`, usable here or not (loading a prebuilt bundle may need no compiler)."""
    m = _WRAPPED.match(name)
    if m:
        wrapper, inner = m.groups()
        if wrapper not in WRAPPERS:
            raise BurnedgeError(f"unknown backend decorator {wrapper!r}; decorators: {', '.join(sorted(WRAPPERS))}")
        return WRAPPERS[wrapper](lookup(inner))
    if name not in names():
        here = available()
        decorated = ", ".join(f"{w}<{here[0] if here else 'c'}>" for w in sorted(WRAPPERS))
        raise BurnedgeError(f"unknown backend {name!r}; available: {', '.join(here)} (and {decorated} ...)")
    return importlib.import_module(f"{__name__}.{name}").BACKEND


def get(name: str) -> Backend:
    """The backend called `name`; an unknown or unusable one is an error that lists the others."""
    backend = lookup(name)
    why = backend.unavailable_reason()
    if why:
        raise BurnedgeError(f"backend {name!r} is not usable here: {why}")
    return backend


def available() -> list[str]:
    """The backends that can run on this machine."""
    out = []
    for n in names():
        try:
            if not importlib.import_module(f"{__name__}.{n}").BACKEND.unavailable_reason():
                out.append(n)
        except ImportError:
            pass
    return out
