"""Backends, found by directory convention: `get("numpy")` imports burnedge.backends.numpy."""

from __future__ import annotations

import importlib
import pkgutil

from ..errors import BurnedgeError
from .base import Backend, Executable

__all__ = ["Backend", "Executable", "available", "get", "names"]


def names() -> list[str]:
    """Every backend package burnedge ships, available here or not."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg)


def get(name: str) -> Backend:
    """The backend called `name`; an unknown or unusable one is an error that lists the others."""
    if name not in names():
        raise BurnedgeError(f"unknown backend {name!r}; available: {', '.join(available())}")
    backend: Backend = importlib.import_module(f"{__name__}.{name}").BACKEND
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
