"""Writing an edge bundle atomically: members go to a temporary file or folder next to the destination, which is
renamed into place at the end, so an exception or an interrupt leaves either the old bundle or the new one.

No data loss: only a bundle is ever replaced, by the format's own check (`format.is_bundle`: its manifest parses
and says a known format version), never a folder or zip that merely holds a manifest.json. A folder is replaced by
one atomic exchange (renameat2); where the file system cannot exchange, the old folder is moved aside and moved
back on any failure, and a run killed in between is repaired by the next write (`files.sweep` puts it back).
Temporaries of interrupted runs are removed by the next write to the same destination.

The format (members, manifest) is described in burnedge.bundle.format, which reads what this writes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import zipfile
from pathlib import Path
from typing import Any, BinaryIO

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..files import exchange, require_regular, sweep, temp_beside, write_atomic
from . import keys, signing
from .format import MANIFEST, MEMBER_NAME, BundleError, is_bundle

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
    """Refuses to overwrite anything but a bundle: an existing file or folder there must be one by the format's
    own check (a FIFO, a web app's folder or a zip with a manifest.json member is not)."""
    if not os.path.lexists(dest):
        return
    require_regular(dest, BundleError, "output", folder=True)
    if dest.is_symlink() or not is_bundle(dest):
        raise BundleError(
            f"{dest} exists and is not an edge bundle (no {MANIFEST} of a known bundle format); refusing to "
            "overwrite it: choose another path or remove it yourself"
        )


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
    if dest.parent.is_dir():
        sweep(dest, restore=lambda old: _restore(old, dest))
    check_destination(dest)
    files = {n: {"sha256": hashlib.sha256(members[n]).hexdigest(), "bytes": len(members[n])} for n in sorted(members)}
    head = dumps({**manifest, "files": files})
    members = {**members, signing.SIGNATURE: signing.signature(head, key or keys.local_key())}
    files = {signing.SIGNATURE: None, **files}  # the order written: the signature right after the manifest
    if not unpacked and not dest.is_dir():  # the common case: one archive, written beside dest and renamed
        return write_atomic(dest, lambda f: _zip(f, head, files, members))
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_beside(dest, folder=unpacked)
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
        _remove(tmp)
        raise
    return dest


def _zip(f: BinaryIO, head: bytes, files: dict[str, Any], members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(f, "w") as zf:
        for n in [MANIFEST, *files]:
            _put(zf, n, head if n == MANIFEST else members[n])


def _swap(tmp: Path, dest: Path) -> None:
    """Puts `tmp` at `dest` in one step: a rename over a file, an exchange with a folder (or a file, when a folder
    replaces an archive); the old bundle is removed after. Without an exchange, the old one is moved aside into a
    ``.old`` folder and moved back on failure (or by the next write's sweep after a kill)."""
    if not os.path.lexists(dest) or (not dest.is_dir() and not tmp.is_dir()):
        os.replace(tmp, dest)
        return
    if exchange(tmp, dest):
        _remove(tmp)  # now the old bundle
        return
    old = temp_beside(dest, folder=True, suffix=".old")
    os.replace(dest, old / "bundle")
    try:
        os.replace(tmp, dest)
    except BaseException:
        os.replace(old / "bundle", dest)
        raise
    finally:
        _remove(old)


def _restore(old: Path, dest: Path) -> None:
    """Puts back the bundle an interrupted replacement moved aside into `old` (when `dest` is still missing)."""
    if (old / "bundle").exists():
        os.replace(old / "bundle", dest)


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        p.unlink(missing_ok=True)
