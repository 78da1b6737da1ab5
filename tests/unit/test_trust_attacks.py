"""Attacks on a bundle's native code, as a careful adversary tries them (issue 11): the attacker edits a bundle and
recomputes every hash in its manifest, but holds no key trusted here. Whatever entry point opens the result, the
attacker's code never runs: its library's constructor (or its source's) would write a marker file, and the marker
never appears. Also: a library row that does not say which CPU runs it is refused; a bundle without a library is
rebuilt from its source only when a trusted key signed it; a build error never shows text of other files.

These tests use the public API only (and write the attacker's bundles by hand), so they run on any burnedge.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest

import burnedge
from burnedge import bundle
from burnedge.backends.c import build
from burnedge.backends.c import loader as c_load
from burnedge.bundle import writer as bundle_writer
from burnedge.cli import main
from burnedge.emulate import emulate
from burnedge.errors import BurnedgeError
from burnedge.exporter import export

from .helpers import mlp, save

MARKER_ENV = "BURNEDGE_TEST_MARKER"
CONSTRUCTOR = (
    "#include <stdio.h>\n#include <stdlib.h>\n"
    "__attribute__((constructor)) static void attacker(void) {\n"
    f'  const char *p = getenv("{MARKER_ENV}"); FILE *f = p ? fopen(p, "w") : NULL;\n'
    '  if (f) { fputs("the attacker\'s code ran\\n", f); fclose(f); }\n}\n'
)


@pytest.fixture(scope="module")
def honest(tmp_path_factory) -> Path:
    """A bundle exported here: signed by this machine's key, so trusted here."""
    folder = tmp_path_factory.mktemp("trust")
    return export(save(mlp(), folder / "mlp.onnx"), folder / "mlp.bedge", test_vectors=1)


@pytest.fixture(scope="module")
def evil_library(tmp_path_factory) -> bytes:
    """A shared library whose constructor writes the marker file ($BURNEDGE_TEST_MARKER)."""
    folder = tmp_path_factory.mktemp("evil")
    (folder / "evil.c").write_text(CONSTRUCTOR)
    cc = build.host_toolchain().cc
    subprocess.run([cc, "-shared", "-fPIC", str(folder / "evil.c"), "-o", str(folder / "evil.so")], check=True)
    return (folder / "evil.so").read_bytes()


@pytest.fixture
def evil_so(evil_library, tmp_path) -> bytes:
    """The library with bytes of its own at the end (ignored by the loader): a new file each test, so a process that
    loaded it once (dlopen runs a constructor once per path) would run it again."""
    return evil_library + str(tmp_path).encode()


@pytest.fixture
def marker(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "pwned.txt"
    monkeypatch.setenv(MARKER_ENV, str(path))
    return path


def tamper(src: Path, dst: Path, replace: dict[str, bytes | None], edit=None, keep_signature: bool = True) -> Path:
    """The attacker's rewrite: members replaced (None: removed), the manifest edited by `edit(manifest)`, every
    hash recomputed; any signature.json is kept as it was (stale) or dropped."""
    with zipfile.ZipFile(src) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    manifest = json.loads(members.pop("manifest.json"))
    signature = members.pop("signature.json", None)
    for name, data in replace.items():
        if data is None:
            members.pop(name, None)
        else:
            members[name] = data
    if edit is not None:
        edit(manifest)
    manifest["files"] = {n: {"sha256": hashlib.sha256(d).hexdigest(), "bytes": len(d)} for n, d in members.items()}
    with zipfile.ZipFile(dst, "w") as z:
        z.writestr("manifest.json", json.dumps(manifest, indent=1))
        if signature is not None and keep_signature:
            z.writestr("signature.json", signature)
        for name, data in members.items():
            z.writestr(name, data)
    return dst


def _cli(*argv: str) -> int:
    return main([*argv])


def _session(p):
    burnedge.Session(p)


def _verify(p):
    burnedge.verify(p)


ENTRY_POINTS = {
    "Session": _session,
    "verify": _verify,
    "cli verify": lambda p: _cli("verify", str(p)),
    "cli run": lambda p: _cli("run", str(p)),
    "cli bench": lambda p: _cli("bench", str(p), "--runs", "1", "--warmup", "0", "--vs", "none"),
    "emulate host": lambda p: emulate(p, "host"),
    "cli emulate host": lambda p: _cli("emulate", str(p), "--target", "host"),
}


def _open(entry: str, path: Path, capsys) -> str:
    """Opens `path` by `entry`; returns the refusal's text ("" when nothing refused it)."""
    try:
        status = ENTRY_POINTS[entry](path)
    except BurnedgeError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - whatever else happens, the test asks whether the marker appeared
        return f"not refused: {type(exc).__name__}: {exc}"
    err = capsys.readouterr().err
    return err if status == 2 else ""


@pytest.mark.parametrize("keep_signature", [True, False], ids=["stale signature", "signature removed"])
@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_a_replaced_library_with_recomputed_hashes_never_runs(
    honest, evil_so, marker, tmp_path, entry, keep_signature, capsys
):
    bad = tamper(honest, tmp_path / "bad.bedge", {"lib/host/model.so": evil_so}, keep_signature=keep_signature)
    refusal = _open(entry, bad, capsys)
    assert not marker.exists(), f"{entry} ran the attacker's library"
    assert "refusing to run this bundle" in refusal and "--trust" in refusal, refusal


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_a_generic_library_row_with_recomputed_hashes_never_runs(honest, evil_so, marker, tmp_path, entry, capsys):
    """The attacker drops the row's CPU fingerprint, so that it would load on any x86-64 Linux."""

    def generic(m):
        m["libraries"]["host"].pop("cpu")

    bad = tamper(honest, tmp_path / "bad.bedge", {"lib/host/model.so": evil_so}, generic)
    refusal = _open(entry, bad, capsys)
    assert not marker.exists(), f"{entry} ran the attacker's library"
    assert "refusing to run this bundle" in refusal, refusal


def _rewritten(src: Path, dst: Path, edit, source: bytes | None = None) -> Path:
    """`src` written again by burnedge itself (so signed by this machine's key where bundles are signed), with
    `edit(manifest)`, and without its libraries when `source` replaces its src/model.c."""
    b = bundle.read(src)
    members = dict(b.members)
    manifest = {k: v for k, v in b.manifest.items() if k != "files"}
    if source is not None:
        for row in manifest.pop("libraries").values():
            members.pop(row["path"])
        manifest["libraries"] = {}
        members["src/model.c"] = source
    edit(manifest)
    return bundle_writer.write(dst, manifest, members)


def test_a_library_row_without_a_cpu_fingerprint_is_refused_even_when_trusted(honest, tmp_path):
    """-march=native code loads only on the CPU it was built for; a row that lost its fingerprint says nothing."""
    bad = _rewritten(honest, tmp_path / "generic.bedge", lambda m: m["libraries"]["host"].pop("cpu"))
    with pytest.raises(burnedge.BundleError, match="carries no CPU fingerprint"):
        burnedge.Session(bad)


@pytest.mark.parametrize("entry", ["Session", "verify", "cli verify", "cli run"])
def test_an_untrusted_source_is_never_compiled(honest, marker, tmp_path, entry, monkeypatch, capsys):
    source = (CONSTRUCTOR + bundle.read(honest).source).encode()
    built = []
    monkeypatch.setattr(c_load, "build_model", lambda *a, **k: built.append(a) or build.build_model(*a, **k))

    def no_library(m):
        m["libraries"] = {}

    bad = tamper(honest, tmp_path / "src.bedge", {"lib/host/model.so": None, "src/model.c": source}, no_library)
    refusal = _open(entry, bad, capsys)
    assert built == [] and not marker.exists(), f"{entry} compiled the attacker's source"
    assert "refusing to run this bundle" in refusal, refusal


def test_a_trusted_bundle_without_a_library_is_rebuilt_from_its_source(honest, tmp_path):
    plain = bundle.read(honest).source.encode()
    rebuilt = _rewritten(honest, tmp_path / "src.bedge", lambda m: None, source=plain)
    assert bundle.read(rebuilt).targets == []
    assert all(c.ok for c in burnedge.verify(rebuilt))
    x = np.linspace(-1, 1, 4, dtype=np.float32).reshape(1, 4)
    want = burnedge.Session(honest).run({"x": x})["y"]
    np.testing.assert_array_equal(burnedge.Session(rebuilt).run({"x": x})["y"], want)


def test_a_build_error_does_not_show_other_files(honest, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cr3t-first-line: do not print me\nsecond line\n")
    source = f'#include "{secret}"\n'.encode() + bundle.read(honest).source.encode()
    bad = _rewritten(honest, tmp_path / "leak.bedge", lambda m: None, source=source)
    with pytest.raises(burnedge.BundleError, match="rebuilding it from the bundle's source failed") as info:
        burnedge.Session(bad)
    assert "s3cr3t" not in str(info.value) and "do not print me" not in str(info.value)
    assert "not shown" in str(info.value)
