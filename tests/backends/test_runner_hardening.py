"""The standalone runner (runner/runner.c) against hostile job folders, built with -fsanitize=address,undefined.

Each job is the smallest edit of a good one that broke the runner before it was hardened: a `-1` or a wrapping
offset in job.txt (a heap buffer overflow), a symbolic link planted at an output (written through), a FIFO as an
input (a hang), and a library name that dlopen searched for instead of taking from the job's folder.
The model library is a tiny stand-in compiled here: it copies its 16-byte input to its output.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from burnedge.backends.c.standalone import RUNNER_SOURCE

CC = shutil.which("cc") or shutil.which("gcc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler")

FAKE_MODEL = """
#include <stdint.h>
#include <stddef.h>
#include <string.h>
size_t be_model_arena_bytes(void) { return 256; }
size_t be_model_weight_bytes(void) { return 16; }
int be_model_run(uint8_t *arena, const uint8_t *weights, int threads) {
    (void)weights; (void)threads; memcpy(arena + 64, arena, 16); return MARK;
}
"""
GOOD_JOB = """burnedge-runner 1
library model.so
weights weights.bin 16
arena 256
input 0 0 16 x
output 0 64 16 u8 0 y
vector vectors/0
"""


@pytest.fixture(scope="module")
def runner(tmp_path_factory) -> Path:
    """The runner built with ASan and UBSan (any overflow aborts with a report instead of passing silently)."""
    out = tmp_path_factory.mktemp("runner") / "runner"
    cmd = [CC, "-g", "-O1", "-std=c11", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
    subprocess.run([*cmd, str(RUNNER_SOURCE), "-o", str(out), "-ldl", "-lm"], check=True)
    return out


@pytest.fixture(scope="module")
def libraries(tmp_path_factory) -> dict[str, Path]:
    """model.so that returns 0 (good) and one that returns 7 (the impostor a library search would find)."""
    folder = tmp_path_factory.mktemp("libs")
    libs = {}
    for name, mark in (("good", 0), ("impostor", 7)):
        src = folder / f"{name}.c"
        src.write_text(FAKE_MODEL.replace("MARK", str(mark)))
        (folder / name).mkdir()
        libs[name] = folder / name / "model.so"
        subprocess.run([CC, "-shared", "-fPIC", str(src), "-o", str(libs[name])], check=True)
    return libs


def job(tmp_path: Path, libraries: dict[str, Path], text: str = GOOD_JOB) -> Path:
    shutil.copy(libraries["good"], tmp_path / "model.so")
    (tmp_path / "weights.bin").write_bytes(bytes(16))
    (tmp_path / "vectors" / "0").mkdir(parents=True)
    (tmp_path / "vectors" / "0" / "in_0.bin").write_bytes(bytes(range(16)))
    (tmp_path / "vectors" / "0" / "ref_0.bin").write_bytes(bytes(range(16)))
    (tmp_path / "job.txt").write_text(text)
    return tmp_path / "job.txt"


def run(runner: Path, job_file: Path, cwd: Path | None = None, env: dict | None = None):
    env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=0", **(env or {})}
    arg = job_file.name if cwd else str(job_file)
    return subprocess.run([str(runner), arg], capture_output=True, text=True, timeout=20, cwd=cwd, env=env)


def test_a_good_job_passes(runner, libraries, tmp_path):
    r = run(runner, job(tmp_path, libraries))
    assert r.returncode == 0 and "PASS" in r.stdout, r.stderr
    assert (tmp_path / "vectors" / "0" / "out_0.bin").read_bytes() == bytes(range(16))


@pytest.mark.parametrize(
    "line",
    [
        "input 0 -1 16 x",  # %zu took -1: offset SIZE_MAX, offset + nbytes wrapped to 15 <= 256
        "input 0 18446744073709551600 32 x",  # a wrapping sum without a sign
        "input 0 0 -16 x",
        "input 0 0 16x x",  # a suffix
        "input 0 +0 16 x",
        "input 0 99999999999999999999999 16 x",  # past 2**64
        "input 0 250 16 x",  # plainly outside the arena
    ],
)
def test_a_bad_number_is_refused_not_an_overflow(runner, libraries, tmp_path, line):
    r = run(runner, job(tmp_path, libraries, GOOD_JOB.replace("input 0 0 16 x", line)))
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert "runner: error:" in r.stderr and "Sanitizer" not in r.stderr
    assert "cannot read this line" in r.stderr or "outside the arena" in r.stderr


@pytest.mark.parametrize(
    "edit",
    [
        ("output 0 64 16 u8 0 y", "output 0 -64 16 u8 0 y"),
        ("arena 256", "arena -1"),
        ("weights.bin 16", "weights.bin -1"),
    ],
)
def test_other_numbers_are_strict(runner, libraries, tmp_path, edit):
    r = run(runner, job(tmp_path, libraries, GOOD_JOB.replace(*edit)))
    assert r.returncode == 2 and "Sanitizer" not in r.stderr, r.stderr[-2000:]


def test_an_output_symlink_is_not_written_through(runner, libraries, tmp_path):
    folder = tmp_path / "job"
    folder.mkdir()
    j = job(folder, libraries)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (folder / "vectors" / "0" / "out_0.bin").symlink_to(victim)
    r = run(runner, j)
    assert r.returncode == 2 and "not a regular file" in r.stderr, r.stderr
    assert victim.read_text() == "precious"


def test_a_linked_vector_folder_is_refused(runner, libraries, tmp_path):
    """vectors/0 a link to a folder outside the job: out_0.bin was written there."""
    folder = tmp_path / "job"
    folder.mkdir()
    j = job(folder, libraries)
    outside = tmp_path / "outside"
    (folder / "vectors" / "0").rename(outside)
    (folder / "vectors" / "0").symlink_to(outside)
    r = run(runner, j)
    assert r.returncode == 2 and "symbolic link inside the job folder" in r.stderr, r.stderr
    assert not (outside / "out_0.bin").exists()


def test_an_input_symlink_is_refused(runner, libraries, tmp_path):
    j = job(tmp_path, libraries)
    real = tmp_path / "elsewhere.bin"
    real.write_bytes(bytes(16))
    (tmp_path / "vectors" / "0" / "in_0.bin").unlink()
    (tmp_path / "vectors" / "0" / "in_0.bin").symlink_to(real)
    r = run(runner, j)
    assert r.returncode == 2 and "symbolic link" in r.stderr, r.stderr


def test_a_fifo_is_refused_not_waited_on(runner, libraries, tmp_path):
    j = job(tmp_path, libraries)
    (tmp_path / "vectors" / "0" / "in_0.bin").unlink()
    os.mkfifo(tmp_path / "vectors" / "0" / "in_0.bin")
    r = run(runner, j)  # before: blocked in open() for ever (the timeout fails the test)
    assert r.returncode == 2 and "not a regular file" in r.stderr, r.stderr


def test_the_library_is_taken_from_the_job_folder_not_searched_for(runner, libraries, tmp_path):
    """`library model.so` with the job run from its own folder: dlopen("model.so") searched LD_LIBRARY_PATH."""
    j = job(tmp_path, libraries)
    r = run(runner, j, cwd=tmp_path, env={"LD_LIBRARY_PATH": str(libraries["impostor"].parent)})
    assert r.returncode == 0 and "PASS" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("name", ["/tmp/model.so", "../model.so", "lib/../../model.so"])
def test_paths_outside_the_job_folder_are_refused(runner, libraries, tmp_path, name):
    r = run(runner, job(tmp_path, libraries, GOOD_JOB.replace("library model.so", f"library {name}")))
    assert r.returncode == 2 and "inside its own folder" in r.stderr, r.stderr


KILLED_BUILD = """
import os, sys
from burnedge.backends.c import build
real = build._run
def run(cmd, what, *args, **kwargs):
    if what == "the model" and sys.argv[2] == "kill":
        os._exit(9)  # kill -9 while the compiler runs: the work folder stays behind
    return real(cmd, what, *args, **kwargs)
build._run = run
print(build.build_model(open(sys.argv[1]).read()))
"""


def test_a_killed_build_leaves_nothing_the_next_build_does_not_remove(tmp_path):
    import uuid

    import onnx
    from onnx import TensorProto, helper

    import burnedge
    from burnedge.backends.c.build import cache_dir

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "r", [x], [y])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(tmp_path / "r.onnx"))
    b = burnedge.bundle.read(burnedge.export(tmp_path / "r.onnx", tmp_path / "r.bedge", test_vectors=0))
    marker = uuid.uuid4().hex
    (tmp_path / "model.c").write_text(f"/* {marker} */\n" + b.source)

    def leftovers() -> list[Path]:
        return [p for p in cache_dir().iterdir() if p.is_dir() and marker in _texts(p)]

    root = Path(__file__).resolve().parents[2]
    killed = subprocess.run([sys.executable, "-c", KILLED_BUILD, str(tmp_path / "model.c"), "kill"], cwd=root)
    assert killed.returncode == 9 and leftovers(), "the killed build left no work folder (nothing to test)"
    done = subprocess.run(
        [sys.executable, "-c", KILLED_BUILD, str(tmp_path / "model.c"), "build"], cwd=root, capture_output=True
    )
    assert done.returncode == 0, done.stderr
    Path(done.stdout.decode().strip()).unlink()
    assert leftovers() == []


def _texts(folder: Path) -> str:
    try:
        return "".join(p.read_text(errors="ignore") for p in folder.glob("*.c"))
    except OSError:
        return ""


def test_generated_source_over_the_compile_size_limit_is_refused_before_the_compiler_runs():
    from burnedge import limits
    from burnedge.backends.c.build import build_model

    with limits.raised(max_source_bytes=1000), pytest.raises(limits.LimitError, match="max_source_bytes = 1000"):
        build_model("/* padding */\n" * 100)
