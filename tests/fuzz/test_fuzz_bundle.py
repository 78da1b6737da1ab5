"""Fuzz target: the bundle reader on mutated valid bundles (harness.py states the property).

Three kinds of mutation of the seed bundle (corpus/bundle/): the manifest's JSON (a value replaced by another of
any type, a key dropped or added, deep nesting) with the hashes still consistent; a member's bytes (flipped,
cut, spliced, replaced) with the manifest's hashes recomputed, so the parsers behind the hashes are reached; and
the archive's own bytes (the zip structure). Each result is read and every accessor is used, then the bundle's
source model runs its test vector on the numpy backend (native code is never loaded: that is the signature's
business).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import burnedge
from burnedge import bundle

from .harness import CORPUS, FUZZ, TRUST_ANY, Tally, holds, sandbox

SEED = (CORPUS / "bundle" / "mlp.bedge").read_bytes()
with zipfile.ZipFile(io.BytesIO(SEED)) as _z:
    MEMBERS = {i.filename: _z.read(i) for i in _z.infolist()}
MANIFEST = json.loads(MEMBERS.pop("manifest.json"))
TALLY = Tally("bundle")

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 1, 2**31, 2**63, 2**64, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["float32", "int64", "object", "V8", "<U3", "bfloat16", "", "lib/host/model.so", "../x"]),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


def _paths(obj, prefix=()):
    """Every (path) to a value inside the manifest."""
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


PATHS = [p for p in _paths(MANIFEST) if p and not (p[0] == "files" and len(p) > 1 and str(p[1]).startswith("src/"))]


def pack(manifest, members: dict[str, bytes], raw_manifest: bytes | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        head = raw_manifest if raw_manifest is not None else json.dumps(manifest).encode()
        for name, data in [("manifest.json", head), *members.items()]:
            zf.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return buf.getvalue()


def _rehash(manifest: dict, members: dict[str, bytes]) -> dict:
    m = json.loads(json.dumps(manifest))
    m["files"] = {n: {"sha256": hashlib.sha256(d).hexdigest(), "bytes": len(d)} for n, d in members.items()}
    return m


def _set(obj, path, value, drop: bool):
    for k in path[:-1]:
        obj = obj[k]
    if drop and isinstance(obj, dict):
        del obj[path[-1]]
    else:
        obj[path[-1]] = value


def _bytes_edit(data: bytes, kind: str, at: int, blob: bytes) -> bytes:
    at = at % (len(data) + 1)
    if kind == "flip" and data:
        i = at % len(data)
        return data[:i] + bytes([data[i] ^ (blob[0] if blob else 0xFF) or 1]) + data[i + 1 :]
    if kind == "cut":
        return data[:at]
    if kind == "insert":
        return data[:at] + blob + data[at:]
    return blob  # replace


edits = st.tuples(
    st.sampled_from(["flip", "cut", "insert", "replace"]), st.integers(0, 1 << 20), st.binary(max_size=64)
)


@st.composite
def mutated(draw) -> bytes:
    kind = draw(st.sampled_from(["manifest", "manifest", "nested", "member", "member", "archive"]))
    members = dict(MEMBERS)
    if kind == "manifest":
        m = json.loads(json.dumps(MANIFEST))
        for _ in range(draw(st.integers(1, 3))):
            path = draw(st.sampled_from(PATHS))
            try:
                _set(m, path, draw(json_value), drop=draw(st.booleans()))
            except (KeyError, IndexError, TypeError):
                pass
        if draw(st.booleans()):
            m["files"] = _rehash(m, members)["files"] if isinstance(m.get("files"), dict) else m.get("files")
        return pack(m, members)
    if kind == "nested":
        depth = draw(st.sampled_from([50, 900, 5000, 100000]))
        path = draw(st.sampled_from(PATHS))
        m = json.loads(json.dumps(MANIFEST))
        raw = json.dumps(m).encode()
        nested = "[" * depth + "1" + "]" * depth
        try:
            _set(m, path, "__NEST__", drop=False)
            raw = json.dumps(m).replace('"__NEST__"', nested).encode()
        except (KeyError, IndexError, TypeError):
            pass
        return pack(None, members, raw)
    if kind == "member":
        name = draw(st.sampled_from(sorted(n for n in members if not n.startswith("lib/"))))
        if name.endswith(".json") and draw(st.booleans()):
            members[name] = json.dumps(draw(json_value)).encode()
        else:
            members[name] = _bytes_edit(members[name], *draw(edits))
        return pack(_rehash(MANIFEST, members), members)
    data = SEED
    for _ in range(draw(st.integers(1, 3))):
        data = _bytes_edit(data, *draw(edits))
    return data


def _use(path: Path) -> None:
    b = bundle.read(path, **TRUST_ANY)
    seen = [b.name, b.inputs, b.outputs, b.arena_bytes, b.weight_bytes, b.targets, b.backend, b.kernels, b.plan]
    seen += [b.tensors(), b.weights(), b.constant_outputs()]
    vectors = b.vectors()
    sess = burnedge.Session(path, backend="numpy", **TRUST_ANY)
    for feeds, _ in vectors:
        sess.run(feeds)


@FUZZ
@given(data=mutated())
def test_the_reader_refuses_or_reads_every_mutated_bundle(data):
    with sandbox() as folder:
        path = folder / "m.bedge"
        path.write_bytes(data)
        holds(TALLY, lambda: _use(path), folder)


def teardown_module(module) -> None:
    TALLY.write()
