"""The system packages the tests need are listed once (tests/system-packages.txt): the list covers what every shipped
board names, scripts/test reads it, and a missing package skips the board tests naming it and its install command
(or fails them where the machine is meant to have it: CI, BURNEDGE_REQUIRE_ARM64)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from burnedge import targets

from .. import system

ROOT = Path(__file__).resolve().parents[2]


def test_the_list_covers_every_shipped_board():
    listed = set(system.packages())
    for t in targets.available().values():
        named = t.package.split() + (t.emulator.package.split() if t.emulator else [])
        assert set(named) <= listed, f"target {t.name} needs {set(named) - listed}, not in {system.LIST}"
    assert {"gcc", "qemu-user-static", "debootstrap"} <= listed  # the host compiler; the arm64 userland job


def test_a_missing_package_skips_naming_it_and_the_install_command(tmp_path, monkeypatch):
    listed = tmp_path / "system-packages.txt"
    listed.write_text(f"# comment\ngcc  gcc   # the C backend\ngcc-nowhere-cross  {tmp_path}/nowhere/bin/cc\n")
    monkeypatch.setattr(system, "LIST", listed)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BURNEDGE_REQUIRE_ARM64", raising=False)
    assert system.missing() == ["gcc-nowhere-cross"] and system.missing(["gcc"]) == []
    with pytest.raises(pytest.skip.Exception, match=r"gcc-nowhere-cross.*`sudo apt-get install gcc-nowhere-cross`"):
        system.require()
    monkeypatch.setenv("BURNEDGE_REQUIRE_ARM64", "1")  # .ci/run: the machine must have them
    with pytest.raises(pytest.fail.Exception, match="gcc-nowhere-cross"):
        system.require()
    with pytest.raises(KeyError, match="not in"):
        system.missing(["no-such-package"])


def test_scripts_test_reads_the_same_list(tmp_path):
    """The script's own parse of the list (bash) gives the packages the tests' parse (Python) gives."""
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    script = (ROOT / "scripts" / "test").read_text()
    parse = script[script.index("done < <(") + len("done < <(") : script.index(")\n", script.index("done < <("))]
    out = subprocess.run(["bash", "-c", parse], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert [line.split()[0] for line in out.splitlines()] == list(system.packages())
    assert 'exec python -m pytest -n 2 "$@"' in script and "scripts/test\n" in (ROOT / ".ci" / "run").read_text()
