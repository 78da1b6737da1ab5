"""Hostile files around a bundle: no data loss on export, bounded reading, no FIFO hangs.

Each test writes the smallest input that did damage before: a folder or zip that merely holds a manifest.json
(deleted or overwritten by `export -o`), a kill between the two renames of a folder replacement (no bundle left),
leftover temporaries of interrupted runs, a deflated member or a manifest asking for 2**62 bytes, and FIFOs given
where a file is expected (open() blocks for ever: the helper unblocks it and fails the test instead).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import burnedge
from burnedge import bundle
from burnedge.cli import main

from .helpers import in_thread

ROOT = Path(__file__).resolve().parents[2]


def tiny_model(path: Path) -> Path:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "tiny", [x], [y])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


MANIFEST = {
    "format": bundle.FORMAT,
    "format_version": bundle.FORMAT_VERSION,
    "model": {"name": "m"},
    **{"arena_bytes": 0, "weight_bytes": 0, "inputs": [], "outputs": [], "weights": [], "vectors": []},
    "libraries": {},
}


def fake_bundle(path: Path, text: str, unpacked: bool = True) -> Path:
    """A bundle of one member by bundle.write (a real bundle by the format's own check)."""
    return bundle.write(path, dict(MANIFEST), {"note.txt": text.encode()}, unpacked=unpacked)


def not_hanging(fn, fifo: Path, timeout: float = 10.0):
    """Runs fn(); if it is still blocked after `timeout` (in open() of `fifo`), unblocks it and fails the test."""
    t, result = in_thread(fn, timeout)
    if t.is_alive():
        for flags in (os.O_WRONLY | os.O_NONBLOCK, os.O_RDONLY | os.O_NONBLOCK):
            try:
                os.close(os.open(fifo, flags))
            except OSError:
                pass
        t.join(5)
        pytest.fail(f"blocked for over {timeout} s on the FIFO {fifo}")
    if "error" in result:
        raise result["error"]
    return result.get("value")


# -- no data loss ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return tiny_model(tmp_path_factory.mktemp("model") / "tiny.onnx")


def test_export_into_a_folder_that_merely_holds_a_manifest_keeps_it(model, tmp_path):
    app = tmp_path / "webapp"
    app.mkdir()
    (app / "manifest.json").write_text('{"name": "my web app", "start_url": "/"}')
    (app / "index.html").write_text("<html>precious</html>")
    assert main(["export", str(model), "-o", str(app), "--test-vectors", "0"]) == 0
    assert (app / "index.html").read_text() == "<html>precious</html>"
    assert json.loads((app / "manifest.json").read_text())["name"] == "my web app"
    assert bundle.read(app / "tiny.bedge").name == "tiny"


def test_export_refuses_a_zip_that_merely_holds_a_manifest(model, tmp_path, capsys):
    z = tmp_path / "extension.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("manifest.json", '{"manifest_version": 3, "name": "browser extension"}')
        zf.writestr("background.js", "precious()")
    before = z.read_bytes()
    assert main(["export", str(model), "-o", str(z), "--test-vectors", "0"]) == 2
    assert "not an edge bundle" in capsys.readouterr().err
    assert z.read_bytes() == before


@pytest.mark.parametrize("version", [99, None, "1"])
def test_an_unknown_format_version_is_not_replaced(tmp_path, version):
    old = tmp_path / "old"
    old.mkdir()
    (old / "manifest.json").write_text(json.dumps({**MANIFEST, "format_version": version}))
    with pytest.raises(burnedge.BundleError, match="not an edge bundle"):
        fake_bundle(old, "new")
    assert (old / "manifest.json").exists()


def test_a_real_bundle_is_still_replaced(tmp_path):
    for unpacked in (True, False):
        dest = tmp_path / f"b{unpacked}"
        fake_bundle(dest, "one", unpacked)
        fake_bundle(dest, "two", unpacked)
        assert bundle.read(dest).member("note.txt") == b"two"
    fake_bundle(tmp_path / "bFalse", "folder over an archive", True)
    assert bundle.read(tmp_path / "bFalse").member("note.txt") == b"folder over an archive"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


KILL_BETWEEN_RENAMES = """
import json, os, sys
from pathlib import Path
from burnedge import bundle
from burnedge.bundle import writer
dest = Path(sys.argv[1])
if sys.argv[2] == "no-exchange":
    writer.exchange = lambda a, b: False
real = os.replace
def replace(src, dst, *a, **k):
    if Path(dst) == dest:  # the new folder going into place: the old one was moved aside already
        os._exit(9)
    return real(src, dst, *a, **k)
os.replace = replace
m = json.loads(sys.argv[3])
bundle.write(dest, m, {"note.txt": b"new"}, unpacked=True)
"""


@pytest.mark.parametrize("mode", ["exchange", "no-exchange"])
def test_a_kill_while_replacing_a_folder_leaves_a_bundle(tmp_path, mode):
    dest = fake_bundle(tmp_path / "b", "old")
    r = subprocess.run(
        [sys.executable, "-c", KILL_BETWEEN_RENAMES, str(dest), mode, json.dumps(MANIFEST)], cwd=ROOT, timeout=60
    )
    if mode == "exchange":  # one atomic exchange: nothing to kill in between; the new bundle is in place
        assert r.returncode == 0 and bundle.read(dest).member("note.txt") == b"new"
    else:  # killed in between: the next write puts the old bundle back before it starts
        assert r.returncode == 9
        fake_bundle(tmp_path / "other", "x")  # a write elsewhere touches nothing here
        fake_bundle(dest, "newer")
        assert bundle.read(dest).member("note.txt") == b"newer"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_failed_exchange_restores_the_old_folder(tmp_path, monkeypatch):
    from burnedge.bundle import writer

    dest = fake_bundle(tmp_path / "b", "old")
    monkeypatch.setattr(writer, "exchange", lambda a, b: False)
    real = os.replace

    def failing(src, dst):
        if Path(dst) == dest and str(src).endswith(".tmp"):
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OSError, match="No space"):
        fake_bundle(dest, "new")
    monkeypatch.setattr(os, "replace", real)
    assert bundle.read(dest).member("note.txt") == b"old"


def test_leftovers_of_interrupted_runs_are_swept(tmp_path):
    dest = tmp_path / "b.bedge"
    dead = 2**22 + 12345  # above the usual pid_max of 4194304: no such process
    left = [tmp_path / f".b.bedge.{dead}-abc.tmp", tmp_path / f".b.bedge.{dead}-def.old", tmp_path / ".b.bedge.x1.tmp"]
    for p in left:
        p.mkdir()
        (p / "member").write_text("half written")
    old = time.time() - 7200
    os.utime(left[2], (old, old))  # an old-style name (no process id), hours old
    live = tmp_path / f".b.bedge.{os.getpid()}-live.tmp"  # a writer still at work: kept
    live.write_text("in progress")
    fake_bundle(tmp_path / "b", "another destination")  # its sweep leaves what belongs to b.bedge alone
    assert all(p.exists() for p in left)
    fake_bundle(dest, "one", unpacked=True)
    assert not any(p.exists() for p in left) and live.exists()
    fake_bundle(tmp_path / "c.bedge", "archive", unpacked=False)
    (tmp_path / f".c.bedge.{dead}-zz.tmp").write_bytes(b"PK")
    fake_bundle(tmp_path / "c.bedge", "archive again", unpacked=False)
    assert not (tmp_path / f".c.bedge.{dead}-zz.tmp").exists()


# -- bounded reading ------------------------------------------------------------------------------------------------
def _rezip(src: Path, dst: Path, compress: int) -> Path:
    """`src` with every member compressed by `compress` (the manifest and its signature unchanged)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, zin.read(info), compress_type=compress)
    return dst


@pytest.fixture(scope="module")
def real_bundle(model) -> Path:
    return burnedge.export(model, model.parent / "tiny.bedge", test_vectors=1)


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_a_compressed_member_is_refused_before_it_is_inflated(real_bundle, tmp_path, method):
    bomb = tmp_path / "bomb.bedge"
    big = bundle.write(tmp_path / "big.bedge", dict(MANIFEST), {"zeros.bin": bytes(8 << 20)})
    _rezip(big, bomb, method)
    assert bomb.stat().st_size < 1 << 20  # 8 MiB of zeros in a few KiB: inflating it is what a bomb does
    with pytest.raises(burnedge.BundleError, match="compressed"):
        bundle.read(bomb)
    with pytest.raises(burnedge.BundleError, match="compressed"):
        bundle.read(_rezip(real_bundle, tmp_path / "deflated.bedge", method))


def test_a_member_larger_than_the_archive_is_refused(tmp_path):
    src = bundle.write(tmp_path / "b.bedge", dict(MANIFEST), {"note.txt": b"0123456789"})
    data = bytearray(src.read_bytes())
    central = data.rindex(b"PK\x01\x02")  # the central record of the last member, note.txt
    data[central + 20 : central + 28] = (2**31).to_bytes(4, "little") * 2  # compressed and plain sizes
    src.write_bytes(bytes(data))
    with pytest.raises(burnedge.BundleError):
        bundle.read(src)


def _rewritten(src: Path, dst: Path, edit=None, member: tuple[str, bytes] | None = None) -> Path:
    """`src` with its manifest edited by `edit` or one member replaced, written (hashed and signed) by this
    machine's key: what passes every check but the one under test."""
    b = bundle.read(src)
    manifest = {k: v for k, v in b.manifest.items() if k != "files"}
    members = dict(b.members)
    if edit:
        edit(manifest)
    if member:
        members[member[0]] = member[1]
    return bundle.write(dst, manifest, members)


@pytest.mark.parametrize("key", ["weight_bytes", "arena_bytes"])
def test_a_manifest_asking_for_2_62_bytes_is_refused_not_allocated(real_bundle, tmp_path, key):
    edited = _rewritten(real_bundle, tmp_path / "edited.bedge", lambda m: m.update({key: 2**62}))
    with pytest.raises(burnedge.BurnedgeError, match=key.replace("_bytes", "") + "|max_arena_bytes"):
        b = bundle.read(edited)
        b.weights()
        burnedge.Session(edited, backend="numpy")


# -- FIFOs ----------------------------------------------------------------------------------------------------------
@pytest.fixture
def fifo(tmp_path):
    def make(name: str) -> Path:
        p = tmp_path / name
        os.mkfifo(p)
        return p

    return make


@pytest.mark.parametrize("name", ["model.onnx", "model.bedge", "model"])
def test_a_fifo_model_or_bundle_is_refused(fifo, name):
    p = fifo(name)
    for opener in (burnedge.Session, burnedge.load, bundle.read):
        if opener is bundle.read and name == "model.onnx":
            continue
        with pytest.raises(burnedge.BurnedgeError, match="FIFO"):
            not_hanging(lambda opener=opener: opener(p), p)
    for argv in (["inspect", str(p)], ["run", str(p)], ["verify", str(p)], ["export", str(p), "-o", str(p) + ".b"]):
        assert not_hanging(lambda argv=argv: main(argv), p) == 2, argv


def test_a_fifo_output_is_refused(model, fifo, capsys):
    out = fifo("out.bedge")
    assert not_hanging(lambda: main(["export", str(model), "-o", str(out), "--test-vectors", "0"]), out) == 2
    assert "is a FIFO" in capsys.readouterr().err


def test_fifo_inputs_and_calibration_data_are_refused(real_bundle, model, fifo, tmp_path, capsys):
    x = fifo("x.npy")
    assert not_hanging(lambda: main(["run", str(real_bundle), "--input", f"x={x}"]), x) == 2
    assert "FIFO" in capsys.readouterr().err
    calib = tmp_path / "calib"
    calib.mkdir()
    np.save(calib / "a.npy", np.zeros((2, 3), np.float32))
    os.mkfifo(calib / "b.npy")
    argv = ["export", str(model), "-o", str(tmp_path / "q.bedge"), "--quantize", "int8", "--calibration", str(calib)]
    assert not_hanging(lambda: main(argv), calib / "b.npy") == 2
    assert "FIFO" in capsys.readouterr().err


def test_member_and_bundle_sizes_have_limits(tmp_path):
    from burnedge import limits

    b = bundle.write(tmp_path / "b.bedge", dict(MANIFEST), {"blob.bin": bytes(5000)})
    for unpacked in (False, True):
        path = b if not unpacked else bundle.write(tmp_path / "u", dict(MANIFEST), {"blob.bin": bytes(5000)}, True)
        with limits.raised(max_member_bytes=4096), pytest.raises(limits.LimitError, match="max_member_bytes"):
            bundle.read(path)
        with limits.raised(max_bundle_bytes=4096), pytest.raises(limits.LimitError, match="max_bundle_bytes"):
            bundle.read(path)
        assert bundle.read(path).member("blob.bin") == bytes(5000)


def _with_member(src: Path, dst: Path, name: str, data: bytes) -> Path:
    """`src` with member `name` replaced by `data`, rewritten and signed here (so the signature and hashes hold)."""
    return _rewritten(src, dst, member=(name, data))


def test_a_deflated_test_vector_is_refused_before_it_is_inflated(real_bundle, tmp_path):
    import io

    buf = io.BytesIO()
    np.savez_compressed(buf, in_0=np.zeros((64, 1024, 1024), np.float32), out_0=np.zeros((2, 3), np.float32))
    assert len(buf.getvalue()) < 1 << 20  # 256 MiB of zeros
    b = bundle.read(_with_member(real_bundle, tmp_path / "bomb.bedge", "vectors/0.npz", buf.getvalue()))
    with pytest.raises(burnedge.BundleError, match="compressed"):
        b.vectors()


def test_a_test_vector_header_claiming_terabytes_is_refused(real_bundle, tmp_path):
    import io

    npy = io.BytesIO()
    header = {"descr": "<f4", "fortran_order": False, "shape": (2**40,)}
    np.lib.format.write_array_header_1_0(npy, header)
    npy.write(bytes(16))  # 4 TiB claimed, 16 bytes held: np.load allocated what the header said
    npz = io.BytesIO()
    with zipfile.ZipFile(npz, "w") as zf:
        zf.writestr("in_0.npy", npy.getvalue())
        zf.writestr("out_0.npy", npy.getvalue())
    b = bundle.read(_with_member(real_bundle, tmp_path / "claims.bedge", "vectors/0.npz", npz.getvalue()))
    with pytest.raises(burnedge.BundleError, match="claims shape"):
        b.vectors()
