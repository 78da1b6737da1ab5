"""The edge bundle: one archive (or folder) holding a compiled model, checked member by member before any use.

Members (format 1), all stored uncompressed with fixed timestamps, so one model always gives the same bytes::

    manifest.json          format and versions, model name, target, inputs/outputs (name, shape, dtype, arena
                           offset), arena bytes and lower bound, weight bytes, the weight blob layout, the
                           libraries by target (each with what loads it: the host's CPU flags for a native
                           build, else the triple and the CPU features it requires), and {member: {sha256,
                           bytes}} for every other member
    plan.json              the steps (ONNX ops fused into each, tensors and arena offsets) and the arena timeline
    weights.safetensors    every constant of the weight blob by key; the manifest's `weights` says where it goes
    src/model.c            the generated C; src/kernels/* the portable (reference) kernel library to rebuild it
    lib/<target>/model.so  the library compiled for each target (burnedge.targets; one bundle may carry several)
    model.onnx             only with --with-source: the source model, for `bench --vs onnxruntime` and other backends
    vectors/<i>.npz        test vectors: in_<k> / out_<k> are input k / reference output k, in manifest order
    signature.json         the Ed25519 signature of manifest.json's bytes and the id of the key that made it

Trust: `read` checks the signature of the manifest's exact bytes (signature.json, not listed in the manifest; see
burnedge.bundle.signing) before it parses anything, then that the file is an archive (or folder) with a manifest
of a known format version, and that the members are exactly those the manifest lists, each with its size and
SHA-256, BEFORE it parses any member.
This module reads and checks; it compiles and loads nothing (a backend's `load` does: burnedge.backends). Writing,
atomic, is burnedge.bundle.writer's; test vectors are burnedge.bundle.vectors'.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import limits
from ..errors import BundleError
from ..files import require_regular
from ..model import TensorInfo
from . import schema, signing
from .signing import SIGNATURE, Trust
from .vectors import decode_npz, typed

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "SUFFIX",
    "Bundle",
    "BundleError",
    "is_bundle",
    "looks_like",
    "read",
]

FORMAT = "burnedge-bundle"
FORMAT_VERSION = 1
SUFFIX = ".bedge"
MANIFEST = "manifest.json"
MEMBER_NAME = re.compile(r"^(?!/)(?!.*(^|/)\.\.?(/|$))[A-Za-z0-9._/+-]+$")  # relative, no "." or ".." parts
_MAX_MANIFEST = 16 << 20


def looks_like(path: str | os.PathLike[str]) -> bool:
    """True for what should be opened as a bundle: a .bedge path, a folder with a manifest, or a zip archive."""
    p = Path(path)
    if p.suffix == SUFFIX or (p.is_dir() and (p / MANIFEST).is_file()):
        return True
    if not p.is_file():  # a FIFO would block open() for ever
        return False
    try:
        with open(p, "rb") as f:
            return f.read(4) == b"PK\x03\x04"
    except OSError:
        return False


def is_bundle(path: str | os.PathLike[str]) -> bool:
    """True only for a bundle by the format's own check: its manifest parses, says this format and a version
    burnedge knows (what may be replaced by a new export; a folder or zip that merely holds a manifest.json is not)."""
    try:
        _manifest(Path(path), _listing(Path(path))[0])
    except BundleError:
        return False
    return True


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- reading ------------------------------------------------------------------------------------------------------
def _listing(path: Path) -> tuple[bytes, dict[str, Any]]:
    """The manifest bytes and a handle to the members: {name: ZipInfo} of an archive, {name: Path} of a folder."""
    require_regular(path, BundleError, "bundle", folder=True)
    if path.is_dir():
        if not (path / MANIFEST).is_file():
            raise BundleError(f"{path}: not an edge bundle (no {MANIFEST} in the folder)")
        entries: dict[str, Any] = {}
        for p in sorted(path.rglob("*")):
            rel = p.relative_to(path).as_posix()
            if p.is_symlink():
                raise BundleError(f"{path}: member {rel!r} is a symbolic link; a bundle holds plain files only")
            require_regular(p, BundleError, f"member {rel!r}", folder=True)
            if p.is_file() and rel != MANIFEST:
                entries[rel] = p
        if (path / MANIFEST).stat().st_size > _MAX_MANIFEST:
            raise BundleError(f"{path}: {MANIFEST} is implausibly large")
        return (path / MANIFEST).read_bytes(), entries
    if not path.is_file():
        raise BundleError(f"{path}: no such file")
    with open(path, "rb") as f:
        zipped = f.read(4) == b"PK\x03\x04"
        f.seek(max(f.seek(0, os.SEEK_END) - 22, 0))
        # NOTE: bundles end with an end-of-archive record and no comment. zipfile would also search further back,
        # and in a truncated bundle find the record of an .npz member inside it: a wrong archive, not an error.
        ends = f.read(22)[:4] == b"PK\x05\x06"
    if not (zipped and ends and zipfile.is_zipfile(path)):
        why = "a truncated or damaged archive" if zipped else "not a zip archive"
        raise BundleError(f"{path}: not a readable edge bundle ({why})")
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            names = [i.filename for i in infos]
            if len(set(names)) != len(names):
                raise BundleError(f"{path}: the archive holds a member twice")
            if MANIFEST not in names:
                raise BundleError(f"{path}: not an edge bundle (no {MANIFEST}; a foreign zip archive?)")
            _stored_only(path, infos)
            info = zf.getinfo(MANIFEST)
            if info.file_size > _MAX_MANIFEST:
                raise BundleError(f"{path}: {MANIFEST} is implausibly large")
            head = zf.read(info)
    except (zipfile.BadZipFile, OSError, NotImplementedError, EOFError, ValueError) as exc:  # "zip file version 23.5"
        raise BundleError(f"{path}: damaged archive ({exc})") from None
    return head, {i.filename: i for i in infos if i.filename != MANIFEST and not i.is_dir()}


def _stored_only(path: Path, infos: list[zipfile.ZipInfo]) -> None:
    """Every member stored (bundles are written so): a compressed one could inflate to any size, and a stored
    member's sizes must agree with each other and fit, together, in the archive itself."""
    archive = path.stat().st_size
    total = 0
    for i in infos:
        if i.compress_type != zipfile.ZIP_STORED:
            raise BundleError(
                f"{path}: member {i.filename!r} is compressed (method {i.compress_type}); bundle members are "
                "stored uncompressed (re-export the model rather than recompress the bundle)"
            )
        if i.compress_size != i.file_size or i.header_offset + i.file_size > archive:
            raise BundleError(f"{path}: member {i.filename!r} claims {i.file_size} bytes the archive does not hold")
        limits.check("max_member_bytes", i.file_size, f"{path}: member {i.filename!r}")
        total += i.file_size
    if total > archive:
        raise BundleError(f"{path}: the members claim {total} bytes, more than the {archive}-byte archive")


def _manifest(path: Path, head: bytes) -> dict[str, Any]:
    try:
        manifest = json.loads(head)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise BundleError(f"{path}: {MANIFEST} is not valid JSON ({type(exc).__name__}: {exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BundleError(f"{path}: not an edge bundle ({MANIFEST} does not say format {FORMAT!r})")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise BundleError(
            f"{path}: bundle format version {version!r} is not known to burnedge (it reads {FORMAT_VERSION}); "
            "export the model again with this version"
        )
    files = manifest.get("files")
    if not isinstance(files, dict) or not all(
        isinstance(f, dict) and isinstance(f.get("sha256"), str) and isinstance(f.get("bytes"), int)
        for f in files.values()
    ):
        raise BundleError(f"{path}: {MANIFEST} has no valid `files` table")
    return manifest


def read(path: str | os.PathLike[str], trust: signing.TrustSpec = None, require_trust: bool = True) -> Bundle:
    """Opens a bundle: first its signature (burnedge.bundle.signing: untrusted is an error unless `require_trust`
    is False, to inspect it), then every member's size and SHA-256 against the signed manifest."""
    path = Path(path)
    head, entries = _listing(path)
    verdict = signing.check(path, head, entries.pop(SIGNATURE, None), trust, require_trust)
    manifest = _manifest(path, head)
    schema.check(f"{path}: {MANIFEST}", manifest)  # every field by type, before any is used
    files: dict[str, dict[str, Any]] = manifest["files"]
    extra, absent = sorted(set(entries) - set(files)), sorted(set(files) - set(entries))
    if extra:
        raise BundleError(f"{path}: member {extra[0]!r} is not listed in the manifest (tampered?)")
    if absent:
        raise BundleError(f"{path}: member {absent[0]!r} listed in the manifest is missing (truncated?)")
    limits.check("max_bundle_bytes", sum(int(f["bytes"]) for f in files.values()), f"{path}: the members")
    members: dict[str, bytes] = {}
    zf = None if path.is_dir() else zipfile.ZipFile(path)
    try:
        for name, want in files.items():
            if not MEMBER_NAME.match(name):
                raise BundleError(f"{path}: invalid member name {name!r}")
            entry = entries[name]
            size = entry.stat().st_size if zf is None else entry.file_size
            limits.check("max_member_bytes", size, f"{path}: member {name!r}")
            if size != want["bytes"]:
                raise BundleError(
                    f"{path}: member {name!r} has {size} bytes, the manifest says {want['bytes']} "
                    "(truncated or tampered)"
                )
            try:
                data = entry.read_bytes() if zf is None else zf.read(entry)
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
                raise BundleError(f"{path}: member {name!r} is damaged ({exc})") from None
            if _sha256(data) != want["sha256"]:
                raise BundleError(f"{path}: member {name!r} fails its SHA-256 check (tampered or damaged)")
            members[name] = data
    except OSError as exc:
        raise BundleError(f"{path}: cannot read the bundle ({exc})") from None
    finally:
        if zf is not None:
            zf.close()
    _check_layout(path, manifest)
    _check_sizes(path, manifest, members)
    return Bundle(path, manifest, members, verdict)


def _check_layout(path: Path, m: dict[str, Any]) -> None:
    """The manifest's own fields: present, typed, and every input and output inside the arena."""
    try:
        arena = int(m["arena_bytes"])
        for kind in ("inputs", "outputs"):
            for t in m[kind]:
                nbytes = math.prod(int(d) for d in t["shape"]) * np.dtype(t["dtype"]).itemsize
                off = t.get("offset")
                if off is None and (kind == "inputs" or "constant" not in t):
                    raise ValueError(f"{t['name']!r} has no arena offset")
                if off is not None and not 0 <= int(off) <= arena - nbytes:
                    raise ValueError(f"{t['name']!r} ({nbytes} bytes at {off}) lies outside the {arena}-byte arena")
        str(m["model"]["name"]), int(m["weight_bytes"]), list(m["weights"]), list(m["vectors"])
        if not all(lib["path"] in m["files"] for lib in m["libraries"].values()):
            raise ValueError("a library is not a member")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BundleError(f"{path}: {MANIFEST} is malformed ({type(exc).__name__}: {exc})") from None


def _check_sizes(path: Path, m: dict[str, Any], members: dict[str, bytes]) -> None:
    """The sizes a reader allocates: the weight blob no larger than the weights it holds (each padded to 64 bytes),
    the arena within max_arena_bytes; a manifest saying `weight_bytes: 2**62` is refused, not allocated."""
    stored = len(members.get("weights.safetensors", b""))
    most = stored + 64 * (len(m["weights"]) + 1)
    if not 0 <= int(m["weight_bytes"]) <= most:
        raise BundleError(
            f"{path}: {MANIFEST} says weight_bytes {m['weight_bytes']}, but weights.safetensors holds {stored} "
            f"bytes (at most {most} with padding; tampered?)"
        )
    if int(m["arena_bytes"]) < 0:
        raise BundleError(f"{path}: {MANIFEST} says arena_bytes {m['arena_bytes']} (negative)")
    limits.check("max_arena_bytes", int(m["arena_bytes"]), f"{path}: the arena")


# -- a verified bundle --------------------------------------------------------------------------------------------
@dataclass
class Bundle:
    """A bundle whose members have all passed their checks; accessors parse them on demand."""

    path: Path
    manifest: dict[str, Any]
    members: dict[str, bytes] = field(repr=False)
    trust: Trust = signing.UNCHECKED  # what its signature check found; only a trusted bundle's code runs

    def member(self, name: str) -> bytes:
        try:
            return self.members[name]
        except KeyError:
            raise BundleError(f"{self.path}: the bundle has no member {name!r}") from None

    def _get(self, key: str) -> Any:
        try:
            return self.manifest[key]
        except KeyError:
            raise BundleError(f"{self.path}: {MANIFEST} lacks {key!r}") from None

    @property
    def name(self) -> str:
        return str(self._get("model")["name"])

    def _infos(self, key: str) -> list[TensorInfo]:
        return [TensorInfo(t["name"], tuple(t["shape"]), np.dtype(t["dtype"])) for t in self._get(key)]

    @property
    def inputs(self) -> list[TensorInfo]:
        return self._infos("inputs")

    @property
    def outputs(self) -> list[TensorInfo]:
        return self._infos("outputs")

    @property
    def arena_bytes(self) -> int:
        return int(self._get("arena_bytes"))

    @property
    def weight_bytes(self) -> int:
        return int(self._get("weight_bytes"))

    @functools.cached_property
    def plan(self) -> dict[str, Any]:
        try:
            plan = json.loads(self.member("plan.json"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise BundleError(f"{self.path}: plan.json is not valid JSON ({type(exc).__name__}: {exc})") from None
        schema.check(f"{self.path}: plan.json", plan, schema.PLAN_SCHEMA)
        return plan

    @property
    def source(self) -> str:
        return self.member("src/model.c").decode()

    @property
    def kernels(self) -> dict[str, str]:
        return {n[len("src/kernels/") :]: d.decode() for n, d in self.members.items() if n.startswith("src/kernels/")}

    @property
    def onnx(self) -> bytes | None:
        """The source ONNX model, when the bundle carries it."""
        return self.members.get("model.onnx")

    def tensors(self) -> dict[str, np.ndarray]:
        from safetensors.numpy import load

        try:
            return load(self.member("weights.safetensors"))
        except Exception as exc:  # safetensors raises its own error type for a malformed header
            raise BundleError(f"{self.path}: weights.safetensors is malformed ({exc})") from None

    def weights(self) -> np.ndarray:
        """The weight blob exactly as the library addresses it: each constant at its offset (read-only bytes)."""
        tensors, size = self.tensors(), self.weight_bytes
        blob = np.zeros(size, np.uint8)
        for w in self._get("weights"):
            arr = tensors.get(w["key"])
            if arr is None or arr.nbytes != w["bytes"] or not 0 <= w["offset"] <= size - w["bytes"]:
                raise BundleError(f"{self.path}: weight {w['key']!r} does not match the manifest's blob layout")
            blob[w["offset"] : w["offset"] + arr.nbytes] = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
        blob.flags.writeable = False
        return blob

    def constant_outputs(self) -> dict[str, np.ndarray]:
        """Outputs that are constants (folded at export): they have no arena offset, their value is stored."""
        tensors = self.tensors() if any("constant" in o for o in self._get("outputs")) else {}
        out = {}
        for o in self._get("outputs"):
            if "constant" in o:
                try:
                    arr = tensors[o["constant"]]
                    out[o["name"]] = arr.view(np.dtype(o["dtype"])).reshape(o["shape"])
                except (KeyError, ValueError, TypeError) as exc:
                    raise BundleError(
                        f"{self.path}: constant output {o['name']!r} does not match its weights entry "
                        f"({type(exc).__name__}: {exc})"
                    ) from None
        return out

    def vectors(self) -> list[tuple[dict[str, np.ndarray], dict[str, np.ndarray]]]:
        """Test vectors: (inputs, reference outputs), each by name."""
        ins, outs = list(self.inputs), list(self.outputs)
        result = []
        for name in self._get("vectors"):
            z = decode_npz(self.member(name), f"{self.path}: test vector {name!r}")
            try:
                result.append(
                    (
                        {t.name: typed(z[f"in_{k}"], t.dtype) for k, t in enumerate(ins)},
                        {t.name: typed(z[f"out_{k}"], t.dtype) for k, t in enumerate(outs)},
                    )
                )
            except KeyError as exc:
                raise BundleError(f"{self.path}: test vector {name!r} lacks {exc}") from None
        return result

    @property
    def targets(self) -> list[str]:
        """The targets the bundle carries a library for."""
        return list(self._get("libraries"))

    @property
    def backend(self) -> str:
        """The backend that built the bundle and loads it (bundles before the field existed are the C backend's)."""
        return str(self.manifest.get("backend", "c"))
