"""Signed bundles: keys (keygen, the local key), signing (export --sign, sign), and trust (this machine's key, the
trusted folder, trust= / --trust, the loud trust="any"); untrusted bundles can still be inspected."""

from __future__ import annotations

import json
import os
import stat
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

import burnedge
from burnedge import bundle
from burnedge.bundle import keys, signing
from burnedge.cli import main
from burnedge.emulate import stage
from burnedge.exporter import export
from burnedge.targets import get

from .helpers import mlp, save

X = np.linspace(-1, 1, 4, dtype=np.float32).reshape(1, 4)


@pytest.fixture(scope="module")
def onnx_path(tmp_path_factory) -> Path:
    return save(mlp(), tmp_path_factory.mktemp("signing") / "mlp.onnx")


@pytest.fixture(scope="module")
def theirs(onnx_path) -> tuple[Path, Path]:
    """(a bundle signed by someone else's key, that key's public file)."""
    folder = onnx_path.parent
    key = folder / "their.key"
    assert main(["keygen", str(key)]) == 0
    out = folder / "theirs.bedge"
    assert main(["export", str(onnx_path), "-o", str(out), "--sign", str(key), "--test-vectors", "1"]) == 0
    return out, keys.public_path(key)


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A BURNEDGE_HOME of this test's own (no local key, nothing trusted yet)."""
    monkeypatch.setenv("BURNEDGE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_keygen_writes_a_private_key_0600_and_refuses_to_overwrite(tmp_path, capsys):
    key = tmp_path / "me.key"
    assert main(["keygen", str(key)]) == 0
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert b"PRIVATE KEY" in key.read_bytes() and b"PUBLIC KEY" in (tmp_path / "me.key.pub").read_bytes()
    kid = keys.key_id(keys.load_private(key))
    assert kid == keys.key_id(keys.load_public(tmp_path / "me.key.pub")) and kid in capsys.readouterr().out
    before = key.read_bytes()
    assert main(["keygen", str(key)]) == 2
    assert "exists; refusing to overwrite a key" in capsys.readouterr().err
    assert key.read_bytes() == before


def test_exports_here_are_signed_by_the_local_key_and_run_without_any_step(onnx_path, tmp_path):
    path = export(onnx_path, tmp_path / "mine.bedge", test_vectors=1)
    b = bundle.read(path)
    assert b.trust.trusted and b.trust.key_id == keys.key_id(keys.local_key()) and "this machine's key" in b.trust.why
    assert "signature.json" in zipfile.ZipFile(path).namelist() and "signature.json" not in b.manifest["files"]
    assert stat.S_IMODE((keys.home() / keys.LOCAL).stat().st_mode) == 0o600
    assert burnedge.Session(path).run({"x": X})["y"].shape == (1, 3)


def test_a_bundle_signed_by_another_key_is_refused_saying_how_to_trust_it(theirs, capsys):
    path, _ = theirs
    with pytest.raises(signing.UntrustedBundleError, match=r"signed by key \w+, which is not trusted here.*--trust"):
        burnedge.Session(path)
    assert main(["verify", str(path)]) == 2
    assert "burnedge trust KEY.pub" in capsys.readouterr().err


def test_trusting_the_key_by_argument_option_or_folder(theirs, home, tmp_path, capsys):
    path, pub = theirs
    np.save(tmp_path / "x.npy", X)
    assert burnedge.Session(path, trust=[pub]).run({"x": X})["y"].shape == (1, 3)
    assert burnedge.Session(path, trust=str(pub)).name == "mlp"
    assert all(c.ok for c in burnedge.verify(path, trust=[pub]))
    assert main(["verify", str(path), "--trust", str(pub)]) == 0
    assert main(["run", str(path), "--input", f"x={tmp_path / 'x.npy'}", "--trust", str(pub)]) == 0
    with pytest.raises(signing.UntrustedBundleError):
        burnedge.Session(path)
    assert main(["trust", str(pub)]) == 0
    assert (home / "trusted" / f"{keys.key_id(keys.load_public(pub))}.pub").is_file()
    assert bundle.read(path).trust.trusted  # the trusted folder: no argument needed any more
    assert main(["verify", str(path)]) == 0


def test_trust_any_runs_an_untrusted_bundle_loudly(theirs, capsys):
    path, _ = theirs
    with pytest.warns(signing.UntrustedBundleWarning, match="running an untrusted bundle .* runs with your rights"):
        sess = burnedge.Session(path, trust="any")
    assert sess.run({"x": X})["y"].shape == (1, 3)
    capsys.readouterr()
    assert main(["verify", str(path), "--trust-any"]) == 0
    assert "burnedge: warning:" in capsys.readouterr().err


def test_untrusted_bundles_can_be_inspected(theirs, capsys):
    path, pub = theirs
    assert main(["inspect", str(path)]) == 0
    assert "which is not trusted here: it would not run here" in capsys.readouterr().out
    assert main(["inspect", str(path), "--json", "--trust", str(pub)]) == 0
    assert json.loads(capsys.readouterr().out)["trust"]["trusted"] is True
    b = bundle.read(path, require_trust=False)  # inspected, not trusted: no loader takes it
    assert not b.trust.trusted and b.plan["steps"]
    with pytest.raises(signing.UntrustedBundleError, match="refusing to"):
        burnedge.Session(b)
    with pytest.raises(signing.UntrustedBundleError, match="refusing to stage its library"):
        stage(b, get("host"), Path(os.devnull) / "never")


def test_sign_vouches_for_a_bundle_without_changing_what_is_signed(theirs, tmp_path, capsys):
    path, _ = theirs
    mine = tmp_path / "mine.key"
    keys.keygen(mine)
    copy = tmp_path / "copy.bedge"
    copy.write_bytes(path.read_bytes())
    before = {n: zipfile.ZipFile(copy).read(n) for n in zipfile.ZipFile(copy).namelist() if n != "signature.json"}
    assert main(["sign", str(copy), "--key", str(mine)]) == 0
    assert "which is not trusted here" in capsys.readouterr().out  # signed, but by a key this machine does not trust
    after = {n: zipfile.ZipFile(copy).read(n) for n in zipfile.ZipFile(copy).namelist() if n != "signature.json"}
    assert after == before
    assert bundle.read(copy, trust=[keys.public_path(mine)]).trust.key_id == keys.key_id(keys.load_private(mine))


def test_the_signature_covers_the_exact_manifest_bytes(onnx_path, tmp_path):
    path = export(onnx_path, tmp_path / "m.bedge", test_vectors=1)
    with zipfile.ZipFile(path) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    members["manifest.json"] = members["manifest.json"].replace(b"\n", b"\n ", 1)  # same JSON, other bytes
    with zipfile.ZipFile(tmp_path / "bad.bedge", "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    with pytest.raises(signing.UntrustedBundleError, match="signature does not match its manifest"):
        bundle.read(tmp_path / "bad.bedge")


def test_an_unpacked_bundle_is_signed_and_checked_too(onnx_path, tmp_path):
    folder = export(onnx_path, tmp_path / "u.bedge", unpacked=True, test_vectors=1)
    assert (folder / "signature.json").is_file() and bundle.read(folder).trust.trusted
    (folder / "signature.json").unlink()
    with pytest.raises(signing.UntrustedBundleError, match="it is not signed"):
        burnedge.Session(folder)
    other = tmp_path / "other.key"
    keys.keygen(other)
    bundle.sign(folder, keys.load_private(other))
    assert bundle.read(folder, trust=[keys.public_path(other)]).trust.trusted


def test_bad_key_files_are_clear_errors(theirs, tmp_path, capsys):
    path, pub = theirs
    (tmp_path / "junk.pub").write_text("not a key\n")
    assert main(["verify", str(path), "--trust", str(tmp_path / "junk.pub")]) == 2
    assert "not an Ed25519 public key" in capsys.readouterr().err
    assert main(["sign", str(path), "--key", str(pub)]) == 2
    assert "not an unencrypted Ed25519 private key" in capsys.readouterr().err
    assert main(["verify", str(path), "--trust", str(pub.with_suffix(""))]) == 2  # the private key, not its .pub
    assert "is a private key; trust its public key instead" in capsys.readouterr().err


def test_racing_makers_of_the_local_key_end_up_with_one_key(home):
    """Threads race like pytest-xdist's workers do (the key appears by a hard link, which fails if it exists)."""
    start, ids = threading.Barrier(6), []

    def make():
        start.wait()
        ids.append(keys.key_id(keys.local_key()))

    threads = [threading.Thread(target=make) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ids) == 6 and set(ids) == {keys.key_id(keys.load_private(home / keys.LOCAL))}
    assert sorted(p.name for p in home.iterdir()) == ["local.key", "local.key.pub"]  # no temporary file left
