"""Files written so that a reader sees the old one or the new one, never half of one, and never anything else.

- `write_atomic`: one file, through a temporary file beside it that is renamed over it;
- `temp_beside` / `temp_folder` / `sweep`: temporary files and folders, named after the destination and the process
  that made them (``.NAME.PID-RANDOM.tmp``), so that the next run removes what an interrupted one (kill -9, a power
  cut) left behind, and never what a live process is still writing;
- `exchange`: two paths swapped in one step (Linux renameat2 RENAME_EXCHANGE), for replacing a folder atomically;
- `require_regular`: refuses a FIFO, device or socket before anything opens it (opening a FIFO blocks forever);
- `c_array`: bytes as C source (weights and test vectors compiled into firmware).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from .errors import BurnedgeError

__all__ = ["c_array", "exchange", "require_regular", "sweep", "temp_beside", "temp_folder", "write_atomic"]

_LEGACY_AGE_S = 3600  # temporaries without a process id (older burnedge): removed once this old


def require_regular(path: str | os.PathLike[str], error: type[BurnedgeError], what: str, folder: bool = False) -> Path:
    """`path`, after checking that it is not a FIFO, device or socket (`folder`: a directory is fine too).

    A missing path passes (the caller says what is missing in its own words). `error` is the error type raised;
    `what` names the path's role in the message ("model", "output").
    """
    path = Path(path)
    try:
        mode = path.stat().st_mode  # stat never blocks, even on a FIFO
    except OSError:
        return path
    if stat.S_ISREG(mode) or (folder and stat.S_ISDIR(mode)):
        return path
    kind = (
        "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a folder"
        if stat.S_ISDIR(mode)
        else "not a regular file"
    )
    raise error(f"{path}: the {what} is {kind}; burnedge reads and writes regular files only")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def temp_beside(path: Path, folder: bool = False, suffix: str = ".tmp") -> Path:
    """A new temporary file (or folder) beside `path`, owner-only, named ``.NAME.PID-RANDOM<suffix>``."""
    prefix = f".{path.name}.{os.getpid()}-"
    if folder:
        return Path(tempfile.mkdtemp(dir=path.parent, prefix=prefix, suffix=suffix))
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=suffix)
    os.close(fd)
    return Path(name)


@contextlib.contextmanager
def temp_folder(path: Path) -> Iterator[Path]:
    """A work folder beside `path` (what it will produce) for the `with` block, removed after; what interrupted
    runs for the same `path` left is swept first (a build killed half way leaves its folder behind)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sweep(path)
    tmp = temp_beside(path, folder=True)
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def sweep(path: Path, restore: Callable[[Path], None] | None = None) -> None:
    """Removes the temporaries beside `path` that an interrupted run left (their process is gone).

    A ``.old`` folder holds a replaced bundle moved aside; when `path` itself is missing, `restore(old)` is called
    first to put it back (an interrupted replacement then leaves the old bundle, not nothing).
    """
    try:
        entries = list(path.parent.glob(f".{path.name}.*"))
    except OSError:
        return
    for p in sorted(entries):
        tag, _, kind = p.name[len(path.name) + 2 :].rpartition(".")
        if kind not in ("tmp", "old") or "." in tag:  # ".b.bedge.1-x.tmp" belongs to b.bedge, not to b
            continue
        pid, dash, _ = tag.partition("-")
        if dash and pid.isdigit():
            if _alive(int(pid)):
                continue
        else:
            try:
                if time.time() - p.lstat().st_mtime < _LEGACY_AGE_S:
                    continue
            except OSError:
                continue
        if kind == "old" and restore is not None and not os.path.lexists(path):
            restore(p)
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def exchange(a: Path, b: Path) -> bool:
    """Swaps `a` and `b` (both must exist) in one atomic step; False where the system cannot (then nothing moved)."""
    libc_name = ctypes.util.find_library("c")
    try:
        renameat2 = ctypes.CDLL(libc_name, use_errno=True).renameat2
    except (OSError, AttributeError, TypeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: this file system or kernel cannot exchange
        return False
    raise OSError(err, os.strerror(err), str(b))


def write_atomic(path: str | os.PathLike[str], data: bytes | Callable[[BinaryIO], object]) -> Path:
    """Writes `data` (bytes, or a function that writes into the open file) to a temporary file beside `path`,
    syncs it and renames it over `path`; returns the path.

    The folder is made when missing; an existing file keeps its permissions (a new one gets 0644). On any failure
    the temporary file is removed and `path` is left as it was; temporaries of interrupted runs are swept first.
    A FIFO, device or socket at `path` is refused (a BurnedgeError naming it), never replaced or opened.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    require_regular(path, BurnedgeError, "output", folder=True)
    sweep(path)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    tmp = temp_beside(path)
    try:
        with open(tmp, "wb") as f:
            if callable(data):
                data(f)
            else:
                f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
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
