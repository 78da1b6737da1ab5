"""Bundle signatures: who vouches for a bundle, checked before anything in it is parsed, so that nothing native
from a bundle loads or is compiled unless a trusted key signed it.

What is signed: the exact bytes of manifest.json, which hold every other member's size and SHA-256. The signature
is a member of its own, signature.json (below), that the manifest does not list, so adding or replacing it changes
nothing that is signed::

    {"format": "burnedge-signature", "algorithm": "ed25519", "key_id": "<16 hex>", "signature": "<base64>"}

Who is trusted (burnedge.bundle.keys): this machine's own key, which signs what it exports; the keys in
$BURNEDGE_HOME/trusted/; and the public key files a caller names (`trust=[...]`, `--trust`). `trust="any"`
(`--trust-any`) runs a bundle nobody trusted, with a warning: the explicit, loud opt-in.

`check` is the one decision (format.read calls it on the raw manifest bytes); `require` is the gate every loader
passes before it loads or compiles a bundle's code (a Bundle read only to be inspected is not trusted).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import warnings
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..errors import BundleError
from . import keys

__all__ = [
    "ANY",
    "SIGNATURE",
    "Trust",
    "TrustSpec",
    "UntrustedBundleError",
    "UntrustedBundleWarning",
    "check",
    "require",
    "signature",
]

SIGNATURE = "signature.json"
ANY = "any"
_FORMAT = "burnedge-signature"
_MAX_SIGNATURE = 4096

# None: the keys trusted here; "any": whatever signed it (a warning); else public key files trusted on top
TrustSpec = None | str | os.PathLike | Iterable[str | os.PathLike]

HOW_TO_TRUST = (
    "if you trust who made it, trust their public key (Session(path, trust=['KEY.pub']), --trust KEY.pub, or once "
    "for all: burnedge trust KEY.pub) or sign it yourself (burnedge sign BUNDLE --key KEYFILE); to run it unchecked "
    "anyway: trust='any' / --trust-any"
)


class UntrustedBundleError(BundleError):
    """A bundle no trusted key signed (or whose signature does not verify): its code is neither loaded nor built."""


class UntrustedBundleWarning(UserWarning):
    """A bundle runs that no trusted key signed, because the caller said trust="any"."""


@dataclass(frozen=True)
class Trust:
    """What the signature check found: `trusted` (its code may run), the key that signed it (when the signature
    verified with a trusted key) and, in words, why."""

    trusted: bool
    key_id: str | None
    why: str


UNCHECKED = Trust(False, None, "not checked (a Bundle made by hand)")


def signature(head: bytes, key: Ed25519PrivateKey) -> bytes:
    """The signature.json member that signs the manifest bytes `head` with `key`."""
    sig = base64.b64encode(key.sign(head)).decode()
    doc = {"format": _FORMAT, "algorithm": "ed25519", "key_id": keys.key_id(key), "signature": sig}
    return (json.dumps(doc, indent=2) + "\n").encode()


def _member(path: Path, entry: Any) -> bytes | None:
    """The raw bytes of the signature member (`entry`: a folder's Path or an archive's ZipInfo; None: absent)."""
    if entry is None:
        return None
    size = entry.stat().st_size if isinstance(entry, Path) else entry.file_size
    if size > _MAX_SIGNATURE:
        raise BundleError(f"{path}: {SIGNATURE} has {size} bytes; a signature has under {_MAX_SIGNATURE}")
    try:
        if isinstance(entry, Path):
            return entry.read_bytes()
        with zipfile.ZipFile(path) as zf:
            return zf.read(entry)
    except (OSError, zipfile.BadZipFile, NotImplementedError, RuntimeError) as exc:
        raise BundleError(f"{path}: cannot read {SIGNATURE} ({exc})") from None


def _paths(trust: TrustSpec) -> list[str | os.PathLike]:
    if trust is None or trust == ANY:
        return []
    if isinstance(trust, (str, os.PathLike)):
        return [trust]
    return list(trust)


def _verdict(head: bytes, raw: bytes | None, trust: TrustSpec) -> Trust:
    """The signature's verdict on the manifest bytes `head` (no error: a Trust whose `why` says what is wrong)."""
    if raw is None:
        return Trust(False, None, "it is not signed")
    try:
        doc = json.loads(raw)
        kid, sig = doc["key_id"], base64.b64decode(doc["signature"], validate=True)
        if doc.get("format") != _FORMAT or doc.get("algorithm") != "ed25519" or not isinstance(kid, str):
            raise ValueError
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeDecodeError):
        return Trust(False, None, f"its {SIGNATURE} is malformed")
    known = keys.trusted_keys(_paths(trust))
    if kid not in known:
        return Trust(False, None, f"it is signed by key {kid}, which is not trusted here")
    pub, where = known[kid]
    try:
        pub.verify(sig, head)
    except InvalidSignature:
        return Trust(False, None, f"its signature does not match its manifest (tampered or damaged; key {kid})")
    return Trust(True, kid, f"signed by key {kid} ({where})")


def check(path: Path, head: bytes, entry: Any, trust: TrustSpec = None, require_trust: bool = True) -> Trust:
    """Checks the signature (`entry`: the signature member, or None) of the manifest bytes `head` against the keys
    `trust` adds to those trusted here. Untrusted: an UntrustedBundleError saying how to trust it, unless
    `require_trust` is False (to inspect a bundle: reading JSON runs nothing) or `trust` is "any" (a warning)."""
    verdict = _verdict(head, _member(path, entry), trust)
    if verdict.trusted:
        return verdict
    if trust == ANY:
        warnings.warn(
            f"{path}: running an untrusted bundle ({verdict.why}) because trust='any' was given: "
            "its native code runs with your rights",
            UntrustedBundleWarning,
            stacklevel=2,
        )
        return Trust(True, None, f"not checked: trust='any' ({verdict.why})")
    if require_trust:
        raise UntrustedBundleError(f"{path}: refusing to run this bundle: {verdict.why}; {HOW_TO_TRUST}")
    return verdict


def require(b: Any, what: str = "run its code") -> None:
    """The gate before a bundle's code is loaded, built or staged: its signature must have been trusted."""
    trust = getattr(b, "trust", UNCHECKED)
    if not trust.trusted:
        raise UntrustedBundleError(f"{b.path}: refusing to {what}: {trust.why}; {HOW_TO_TRUST}")
