"""Ed25519 key files and where this machine keeps trust: its own key, the trusted folder, and key ids.

Files (PEM, as OpenSSL writes them, so other tools read them too)::

    KEYFILE              the private key (PKCS#8), mode 0600: it signs bundles
    KEYFILE.pub          its public key (SubjectPublicKeyInfo): whoever holds it can check those signatures

    $BURNEDGE_HOME/      default ~/.config/burnedge/, mode 0700
        local.key(.pub)  this machine's key: made on the first export, signs what this machine exports, trusted here
        trusted/*.pub    the other keys trusted here (`burnedge trust KEY.pub` copies one in)

A key id is the first 16 hex digits of the SHA-256 of the raw 32-byte public key. New key files appear whole or
not at all, and never replace an existing one: written to a temporary name, then hard-linked into place (the link
fails if the name exists), so two processes making the local key at once end up with one key.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ..errors import BurnedgeError
from ..files import write_atomic

__all__ = [
    "KeyFileError",
    "home",
    "key_id",
    "keygen",
    "load_private",
    "load_public",
    "local_key",
    "public_path",
    "trust_key",
    "trusted_keys",
]

HOME_ENV = "BURNEDGE_HOME"
LOCAL = "local.key"
TRUSTED = "trusted"
_MAX_KEY_FILE = 64 << 10


class KeyFileError(BurnedgeError):
    """A key file that cannot be made or read: it exists already, is not an Ed25519 key, or is unreadable."""


def home() -> Path:
    """Where this machine keeps its key and the keys it trusts: $BURNEDGE_HOME, else ~/.config/burnedge."""
    return Path(os.environ.get(HOME_ENV) or Path.home() / ".config" / "burnedge")


def key_id(key: Ed25519PublicKey | Ed25519PrivateKey) -> str:
    pub = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    raw = pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def public_path(path: str | os.PathLike[str]) -> Path:
    p = Path(path)
    return p.with_name(p.name + ".pub")


def _private_pem(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _public_pem(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def _place_new(path: Path, data: bytes, mode: int) -> bool:
    """Writes `data` to `path` only where nothing is: whole, with `mode`; False when the name exists already."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        return True
    finally:
        os.unlink(tmp)


def keygen(path: str | os.PathLike[str]) -> Ed25519PrivateKey:
    """Makes a new key: `path` (private, mode 0600) and `path`.pub; an existing file of either name is an error."""
    path = Path(path)
    pub = public_path(path)
    for p in (path, pub):
        if p.exists() or p.is_symlink():
            raise KeyFileError(f"{p} exists; refusing to overwrite a key (remove it first or choose another name)")
    if not path.parent.is_dir():
        raise KeyFileError(f"{path}: the folder {path.parent} does not exist")
    key = Ed25519PrivateKey.generate()
    if not _place_new(path, _private_pem(key), 0o600):
        raise KeyFileError(f"{path} exists; refusing to overwrite a key")
    if not _place_new(pub, _public_pem(key.public_key()), 0o644):
        path.unlink()
        raise KeyFileError(f"{pub} exists; refusing to overwrite a key")
    return key


def _read(path: Path, what: str) -> bytes:
    if not path.is_file():
        raise KeyFileError(f"{path}: no such {what} file" if not path.exists() else f"{path} is not a regular file")
    if path.stat().st_size > _MAX_KEY_FILE:
        raise KeyFileError(f"{path} is too large to be a key file")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None


def load_private(path: str | os.PathLike[str]) -> Ed25519PrivateKey:
    """The private key in `path` (PEM, unencrypted, Ed25519: what `burnedge keygen` writes)."""
    path = Path(path)
    data = _read(path, "private key")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        key = None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"{path}: not an unencrypted Ed25519 private key (make one with: burnedge keygen KEYFILE)")
    return key


def load_public(path: str | os.PathLike[str]) -> Ed25519PublicKey:
    """The public key in `path` (PEM, Ed25519: the KEYFILE.pub `burnedge keygen` writes)."""
    path = Path(path)
    data = _read(path, "public key")
    if b"PRIVATE KEY" in data:
        raise KeyFileError(f"{path} is a private key; trust its public key instead ({path.name}.pub)")
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm):
        key = None
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError(f"{path}: not an Ed25519 public key (the KEYFILE.pub that burnedge keygen writes)")
    return key


def _home_folder() -> Path:
    folder = home()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


def local_key() -> Ed25519PrivateKey:
    """This machine's key ($BURNEDGE_HOME/local.key), made on first use; every process gets the same one."""
    path = _home_folder() / LOCAL
    if not path.exists():
        _place_new(path, _private_pem(Ed25519PrivateKey.generate()), 0o600)  # False: another process won; fine
    key = load_private(path)
    pub = public_path(path)
    if not pub.is_file():
        write_atomic(pub, _public_pem(key.public_key()))
    return key


def trust_key(path: str | os.PathLike[str]) -> Path:
    """Copies a public key into $BURNEDGE_HOME/trusted/ (as KEYID.pub): bundles it signed run here from now on."""
    key = load_public(path)
    folder = _home_folder() / TRUSTED
    folder.mkdir(mode=0o700, exist_ok=True)
    return write_atomic(folder / f"{key_id(key)}.pub", _public_pem(key))


def trusted_keys(extra: Iterable[str | os.PathLike[str]] = ()) -> dict[str, tuple[Ed25519PublicKey, str]]:
    """{key id: (key, where it comes from)}: this machine's own key (when it has one), those in the trusted folder,
    and the public key files `extra`."""
    out: dict[str, tuple[Ed25519PublicKey, str]] = {}
    local = home() / LOCAL
    if local.is_file():
        pub = load_private(local).public_key()
        out[key_id(pub)] = (pub, "this machine's key")
    folder = home() / TRUSTED
    for p in sorted(folder.glob("*.pub")) if folder.is_dir() else []:
        pub = load_public(p)
        out.setdefault(key_id(pub), (pub, f"trusted in {p}"))
    for p in extra:
        pub = load_public(p)
        out.setdefault(key_id(pub), (pub, f"trusted by {p}"))
    return out
