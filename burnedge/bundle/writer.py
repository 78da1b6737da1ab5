"""Writing an edge bundle atomically: members go to a temporary file or folder next to the destination, which is
renamed into place at the end, so an exception or an interrupt leaves either the old bundle or the new one.

The format (members, manifest) is described in burnedge.bundle.format, which reads what this writes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any, BinaryIO

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..files import write_atomic
from . import keys, signing
from .format import MANIFEST, MEMBER_NAME, BundleError

__all__ = ["check_destination", "dumps", "write"]

_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest zip timestamp: every member gets it, so bundles are reproducible


def dumps(obj: Any) -> bytes:
    """JSON a person can read: every list or object that fits on one line of 100 columns stays on one line."""

    def fmt(o: Any, indent: int, lead: int = 0) -> str:  # lead: columns taken before `o` on its first line
        flat = json.dumps(o)
        if not isinstance(o, (dict, list)) or not o or indent + lead + len(flat) <= 100:
            return flat
        pad = " " * (indent + 2)
        if isinstance(o, dict):
            items = [f"{pad}{json.dumps(k)}: {fmt(v, indent + 2, len(json.dumps(k)) + 2)}" for k, v in o.items()]
            return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
        return "[\n" + ",\n".join(pad + fmt(v, indent + 2) for v in o) + "\n" + " " * indent + "]"

    return (fmt(obj, 0) + "\n").encode()


def _put(out: zipfile.ZipFile | Path, name: str, data: bytes) -> None:
    """Adds one member to the archive being written (or one file to the folder)."""
    if isinstance(out, Path):
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    else:
        info = zipfile.ZipInfo(name, date_time=_EPOCH)
        info.external_attr = 0o644 << 16
        out.writestr(info, data, compress_type=zipfile.ZIP_STORED)


def check_destination(dest: Path) -> None:
    """Refuses to overwrite anything but a bundle: an existing file or folder there must be one."""
    if not dest.exists():
        return
    if dest.is_dir():
        ok = (dest / MANIFEST).is_file()
    else:
        try:
            with zipfile.ZipFile(dest) as zf:
                ok = MANIFEST in zf.namelist()
        except (OSError, zipfile.BadZipFile):
            ok = False
    if not ok:
        raise BundleError(f"{dest} exists and is not an edge bundle; refusing to overwrite it")


def write(
    path: str | os.PathLike[str],
    manifest: dict[str, Any],
    members: dict[str, bytes],
    unpacked: bool = False,
    key: Ed25519PrivateKey | None = None,
) -> Path:
    """Writes a bundle atomically (an archive, or a folder when `unpacked`) and returns its path.

    `manifest` gets `files` (the size and SHA-256 of every member) added; `key` (default: this machine's,
    burnedge.bundle.keys.local_key) signs it (an old signature.json among `members` is dropped: it signed another
    manifest). An existing bundle at `path` is replaced; any other existing file or folder is an error.
    """
    dest = Path(path)
    members = {n: d for n, d in members.items() if n != signing.SIGNATURE}
    bad = [n for n in members if not MEMBER_NAME.match(n) or n == MANIFEST]
    if bad:
        raise BundleError(f"invalid member name(s) {bad}")
    check_destination(dest)
    files = {n: {"sha256": hashlib.sha256(members[n]).hexdigest(), "bytes": len(members[n])} for n in sorted(members)}
    head = dumps({**manifest, "files": files})
    members = {**members, signing.SIGNATURE: signing.signature(head, key or keys.local_key())}
    files = {signing.SIGNATURE: None, **files}  # the order written: the signature right after the manifest
    if not unpacked and not dest.is_dir():  # the common case: one archive, written beside dest and renamed
        return write_atomic(dest, lambda f: _zip(f, head, files, members))
    dest.parent.mkdir(parents=True, exist_ok=True)
    if unpacked:
        tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp"))
    else:
        fd, name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
        os.close(fd)
        tmp = Path(name)
    try:
        if unpacked:
            for n in [MANIFEST, *files]:
                _put(tmp, n, head if n == MANIFEST else members[n])
        else:
            with open(tmp, "wb") as f:
                _zip(f, head, files, members)
        for p in [tmp, *tmp.rglob("*")] if unpacked else [tmp]:
            p.chmod(0o755 if p.is_dir() else 0o644)  # mkstemp and mkdtemp make them owner-only
        _swap(tmp, dest)
    except BaseException:
        if unpacked:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        raise
    return dest


def _zip(f: BinaryIO, head: bytes, files: dict[str, Any], members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(f, "w") as zf:
        for n in [MANIFEST, *files]:
            _put(zf, n, head if n == MANIFEST else members[n])


def _swap(tmp: Path, dest: Path) -> None:
    """Renames `tmp` to `dest`; an old bundle folder there is moved aside first, then removed."""
    if not dest.is_dir():
        if tmp.is_dir() and dest.exists():
            dest.unlink()
        os.replace(tmp, dest)
        return
    old = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".old"))
    os.replace(dest, old / "bundle")
    try:
        os.replace(tmp, dest)
    except BaseException:
        os.replace(old / "bundle", dest)
        raise
    finally:
        shutil.rmtree(old, ignore_errors=True)
