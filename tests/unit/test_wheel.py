"""A wheel of the repository works on its own: built from the tracked files, installed into a fresh venv, run outside
the repository (the development environment's editable install must not be what answers).

Steps: copy the files git tracks (as they are in the working tree, so uncommitted edits are tested and untracked
junk is not) to a temporary folder; `pip wheel` it without build isolation; check that every file tracked under
burnedge/ is in the wheel; make a venv that sees this environment's site-packages (no network); install the wheel
into it; from a temporary working directory run `burnedge demo` and `burnedge export --target rpi4`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.boards]  # boards: it exports for rpi4 (tests/system-packages.txt)


def _run(cmd: list[str | Path], cwd: Path, env: dict[str, str] | None = None, timeout: int = 180) -> str:
    proc = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert proc.returncode == 0, (
        f"{' '.join(map(str, cmd))} (in {cwd}) exited {proc.returncode}\n"
        f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"
    )
    return proc.stdout


def _tracked_files() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.fail("the wheel test needs git and the repository's .git (it builds from the tracked files)")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [f for f in out.decode().split("\0") if f and (ROOT / f).is_file()]  # a deleted file is not copied


def test_wheel_installs_and_runs_outside_the_repository(tmp_path: Path):
    files = _tracked_files()
    src = tmp_path / "src"
    for rel in files:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)

    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", dist, "."], src)
    (wheel,) = dist.glob("burnedge-*.whl")

    with zipfile.ZipFile(wheel) as zf:
        shipped = set(zf.namelist())
    missing = [f for f in files if f.startswith("burnedge/") and f not in shipped]
    assert not missing, "tracked package files missing from the wheel (pyproject package-data):\n  " + "\n  ".join(
        missing
    )

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", venv], tmp_path)
    py, burnedge = venv / "bin" / "python", venv / "bin" / "burnedge"
    _run([py, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", wheel], tmp_path)

    work = tmp_path / "work"
    work.mkdir()
    unset = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "BURNEDGE_TARGETS")  # nothing may point back at the repo
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env["BURNEDGE_CACHE"] = str(tmp_path / "cache")

    where = _run(
        [py, "-c", "import burnedge, burnedge.examples as e; print(burnedge.__file__); print(e.DIGITS_MODEL)"],
        work,
        env,
    ).splitlines()
    package, model = Path(where[0]).resolve(), Path(where[1])
    assert package.is_relative_to(venv.resolve()), f"burnedge imported from {package}, not from the wheel in {venv}"
    assert model.is_file() and model.resolve().is_relative_to(venv.resolve()), model

    demo = _run([burnedge, "demo"], work, env)
    assert "accuracy" in demo, demo

    out = work / "out" / "digits_mlp.bedge"
    _run([burnedge, "export", model, "--target", "rpi4", "-o", out], work, env)
    assert out.is_file() and out.stat().st_size > 0, f"export wrote nothing at {out}"
