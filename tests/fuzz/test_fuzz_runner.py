"""Fuzz target: the standalone C runner (runner/runner.c), built with -fsanitize=address,undefined, on mutated job
folders (harness.py states the property; here for a process).

The seed job is tests/backends/test_runner_hardening.py's (a stand-in model library that copies its input to its
output). A mutation edits job.txt (a token replaced by a number of any size or sign, a suffix, a path out of the
folder, text; a line dropped, repeated or added; bytes flipped) or a file of the job (an input or the weights cut
or grown, replaced by a folder, a symbolic link or a FIFO). The runner must exit with a status (0: pass, else its
error, one `runner: error:` line), never by a signal, never with a sanitizer report, within the timeout; it may
write only out_*.bin files inside the job folder, and no file may be lost.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from burnedge.backends.c.standalone import RUNNER_SOURCE
from tests.backends.test_runner_hardening import CC, FAKE_MODEL, GOOD_JOB

from .harness import FUZZ, TIMEOUT, Tally, listing, sandbox

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler")
TALLY = Tally("runner")
SANITIZED = ("-g", "-O1", "-std=c11", "-fsanitize=address,undefined", "-fno-sanitize-recover=all")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """(the sanitizer-built runner, the stand-in model.so)."""
    folder = tmp_path_factory.mktemp("runner")
    subprocess.run([CC, *SANITIZED, str(RUNNER_SOURCE), "-o", str(folder / "runner"), "-ldl", "-lm"], check=True)
    (folder / "model.c").write_text(FAKE_MODEL.replace("MARK", "0"))
    subprocess.run([CC, "-shared", "-fPIC", str(folder / "model.c"), "-o", str(folder / "model.so")], check=True)
    return folder / "runner", folder / "model.so"


numbers = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.sampled_from(["0", "-1", "16", "64", "256", "18446744073709551615", "18446744073709551616", "0x10", "+1"]),
    st.sampled_from(["1e3", "16x", "", " ", "-0", "007", "99999999999999999999999999"]),
)
paths = st.sampled_from(["model.so", "../model.so", "/etc/passwd", "vectors/0", ".", "..", "vectors", "a/../../b"])
tokens = numbers | paths | st.text(alphabet="abcxyzu81632f ", max_size=6)
WORDS = ["burnedge-runner", "library", "weights", "arena", "input", "output", "vector", "bogus"]


@st.composite
def job_edit(draw) -> tuple[str, list[tuple[str, str]]]:
    lines = GOOD_JOB.splitlines()
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["token", "token", "token", "drop", "repeat", "add", "bytes"]))
        i = draw(st.integers(0, len(lines) - 1)) if lines else 0
        if kind == "token" and lines:
            words = lines[i].split(" ")
            words[draw(st.integers(0, len(words) - 1))] = draw(tokens)
            lines[i] = " ".join(words)
        elif kind == "drop" and lines:
            del lines[i]
        elif kind == "repeat" and lines:
            lines.insert(i, lines[i])
        elif kind == "add":
            lines.insert(i, " ".join([draw(st.sampled_from(WORDS)), *draw(st.lists(tokens, max_size=6))]))
        elif kind == "bytes" and lines:
            line = lines[i]
            j = draw(st.integers(0, len(line)))
            lines[i] = line[:j] + draw(st.text(max_size=3)) + line[j:]
    files = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["vectors/0/in_0.bin", "weights.bin", "vectors/0/ref_0.bin", "vectors/0/out_0.bin"]),
                st.sampled_from(["cut", "grow", "folder", "symlink", "fifo", "remove"]),
            ),
            max_size=2,
        )
    )
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"])), files


def _make(job: Path, model_so: Path, text: str, files: list[tuple[str, str]]) -> None:
    (job / "vectors" / "0").mkdir(parents=True)
    shutil.copy(model_so, job / "model.so")
    (job / "weights.bin").write_bytes(bytes(16))
    (job / "vectors" / "0" / "in_0.bin").write_bytes(bytes(range(16)))
    (job / "vectors" / "0" / "ref_0.bin").write_bytes(bytes(range(16)))
    (job / "job.txt").write_text(text)
    for name, how in files:
        p = job / name
        if p.is_dir() and not p.is_symlink():
            p.rmdir()
        elif p.exists() or p.is_symlink():
            p.unlink()
        if how == "cut":
            p.write_bytes(bytes(5))
        elif how == "grow":
            p.write_bytes(bytes(4096))
        elif how == "folder":
            p.mkdir()
        elif how == "symlink":
            p.symlink_to(job.parent / "outside.bin")
        elif how == "fifo":
            os.mkfifo(p)


def _entries(folder: Path) -> set[str]:
    """Every path under `folder`, files, folders, links and FIFOs alike."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}


@FUZZ
@given(edit=job_edit())
def test_the_runner_refuses_or_runs_every_mutated_job(built, edit):
    with sandbox() as folder:
        _check(*built, edit, folder)


def _check(runner: Path, model_so: Path, edit, sandbox: Path) -> None:
    (sandbox / "outside.bin").write_bytes(b"precious")
    job = sandbox / "job"
    _make(job, model_so, *edit)
    before, sizes = _entries(sandbox), listing(sandbox)
    env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0", "UBSAN_OPTIONS": "print_stacktrace=1"}
    try:
        r = subprocess.run(
            [str(runner), str(job / "job.txt")],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=TIMEOUT,
            env=env,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the runner hangs on {edit!r}") from None
    assert "Sanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr[-3000:]
    assert r.returncode >= 0, f"killed by signal {-r.returncode}: {r.stderr[-2000:]}"
    TALLY.count(refused=r.returncode != 0)
    if r.returncode != 0:
        assert "runner: error:" in r.stderr or "FAIL" in r.stdout, (r.returncode, r.stdout[-500:], r.stderr[-500:])
    after = _entries(sandbox)
    assert not before - after, f"lost: {sorted(before - after)}"
    new = sorted(p for p in after - before if not (p.startswith("job/") and Path(p).name.startswith("out_")))
    assert not new, f"written outside the job's outputs: {new}"
    assert (sandbox / "outside.bin").read_bytes() == b"precious"
    changed = [p for p, n in sizes.items() if listing(sandbox).get(p) != n and not Path(p).name.startswith("out_")]
    assert not changed, f"files changed: {changed}"


def teardown_module(module) -> None:
    TALLY.write()
