"""Signing a bundle that exists already (`burnedge sign`): its signature.json replaced in place, atomically, and
nothing else changed, since the signature covers the manifest's exact bytes (burnedge.bundle.signing)."""

from __future__ import annotations

import os
import zipfile

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..files import write_atomic
from . import signing
from .format import MANIFEST, read
from .writer import _zip

__all__ = ["sign"]


def sign(path: str | os.PathLike[str], key: Ed25519PrivateKey) -> signing.Trust:
    """Signs the bundle at `path` with `key`. Its members are checked first; anyone's bundle can be signed (that
    is the point: the signer vouches for it). Returns the verdict on the new signature here."""
    b = read(path, require_trust=False)
    if b.path.is_dir():
        head = (b.path / MANIFEST).read_bytes()
        write_atomic(b.path / signing.SIGNATURE, signing.signature(head, key))
    else:
        with zipfile.ZipFile(b.path) as zf:
            head = zf.read(MANIFEST)
        members = {**b.members, signing.SIGNATURE: signing.signature(head, key)}
        files = {signing.SIGNATURE: None, **b.manifest["files"]}  # the signature right after the manifest
        write_atomic(b.path, lambda f: _zip(f, head, files, members))
    return read(b.path, require_trust=False).trust
