"""Writing files so that a reader sees the old file or the new one, never half of one (the one write_atomic),
and bytes as C source (c_array: weights and test vectors compiled into firmware)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = ["c_array", "write_atomic"]


def write_atomic(path: str | os.PathLike[str], data: bytes | Callable[[BinaryIO], object]) -> Path:
    """Writes `data` (bytes, or a function that writes into the open file) to a temporary file beside `path`,
    syncs it and renames it over `path`; returns the path.

    The folder is made when missing; an existing file keeps its permissions (a new one gets 0644). On any failure
    the temporary file is removed and `path` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            if callable(data):
                data(f)
            else:
                f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def c_array(name: str, data: bytes, align: int = 8, storage: str = "static ") -> str:
    """`data` as a C definition ``const uint8_t name[n]``, `align`-byte aligned: const, so it goes to flash on a
    microcontroller; decimal values, lines of about 110 characters."""
    values = ",".join(str(v) for v in data) or "0"
    lines = []
    while values:
        cut = values.find(",", 110)
        cut = len(values) if cut < 0 else cut + 1
        lines.append(values[:cut])
        values = values[cut:]
    body = "\n".join(lines)
    return f"{storage}const uint8_t {name}[{max(len(data), 1)}] __attribute__((aligned({align}))) = {{\n{body}\n}};\n"
