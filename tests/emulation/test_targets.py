"""Targets: loading the shipped files and user files, clear errors for a bad file, an unknown target, a missing
cross compiler, a missing QEMU or Docker engine; library choice on a board; the standalone runner on the host."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import numpy as np
import pytest

import burnedge
from burnedge import bundle, host, targets
from burnedge.backends.c import build
from burnedge.backends.c import loader as c_load
from burnedge.backends.c.cross import pick_library, toolchain
from burnedge.cli import main
from burnedge.emulate import EmulationError, emulate
from burnedge.targets import TargetError

from .models import tiny_cnn

BOARDS = ("rpi3", "rpi4", "rpi5", "jetson-nano", "jetson-orin", "riscv64")
RPI4 = """description = "my board"
os = "linux"
arch = "aarch64"
triple = "aarch64-linux-gnu"
cores = 4
ram_mb = 512
features = ["fp", "asimd"]

[compiler]
cc = "aarch64-linux-gnu-gcc"
ar = "aarch64-linux-gnu-ar"
package = "gcc-aarch64-linux-gnu"
flags = ["-mcpu=cortex-a72"]

[emulator]
command = ["qemu-aarch64", "-cpu", "cortex-a72"]
sysroot = "/usr/aarch64-linux-gnu"
"""


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.toml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def host_bundle(tmp_path_factory) -> Path:
    return burnedge.export(tiny_cnn(), tmp_path_factory.mktemp("b") / "tiny.bedge", test_vectors=2)


# -- loading --------------------------------------------------------------------------------------------------------
def test_shipped_targets_load():
    known = targets.available()
    assert {"host", *BOARDS} <= set(known)
    rpi5, rpi3, rv = known["rpi5"], known["rpi3"], known["riscv64"]
    assert rpi5.arch == "aarch64" and "asimddp" in rpi5.features and "-mcpu=cortex-a76" in rpi5.flags
    assert "asimddp" in known["jetson-orin"].features and "fphp" in known["jetson-orin"].features
    assert "asimddp" not in known["rpi4"].features
    assert rpi3.triple == "arm-linux-gnueabihf" and "-mfloat-abi=hard" in rpi3.flags and "neon" in rpi3.features
    assert rv.emulator.argv()[:3] == ["qemu-riscv64", "-cpu", "sifive-u54"]
    assert known["host"].native and known["host"].emulator is None
    for name in BOARDS:
        t = known[name]
        assert t.cores >= 1 and t.ram_mb >= 256 and t.emulator is not None and t.emulator.sysroot
        assert t.emulator.argv()[-2:] == ["-L", t.emulator.sysroot]
    with pytest.raises(AttributeError):
        rpi5.cores = 8  # frozen


def test_host_toolchain_is_the_backend_s():
    assert toolchain(targets.get("host")) == build.host_toolchain()


def test_cross_toolchain_flags():
    tc = toolchain(targets.get("rpi4"))
    assert tc.cc == "aarch64-linux-gnu-gcc" and tc.name == "rpi4" and tc.package.startswith("gcc-aarch64")
    assert "-mcpu=cortex-a72" in tc.cflags and "-march=native" not in tc.cflags and "-fopenmp" not in tc.cflags


def test_user_targets_from_dirs_env_and_path(tmp_path, monkeypatch):
    mine = _write(tmp_path / "a", "myboard", RPI4)
    assert targets.get("myboard", [tmp_path / "a"]).ram_mb == 512
    monkeypatch.setenv("BURNEDGE_TARGETS", str(tmp_path / "a"))
    assert "myboard" in targets.available() and targets.get("myboard").description == "my board"
    _write(tmp_path / "b", "rpi4", RPI4.replace("my board", "my own rpi4"))
    assert targets.get("rpi4", [tmp_path / "b"]).description == "my own rpi4"  # a user file wins
    assert targets.get(str(mine)).name == "myboard"  # a path where a name is expected
    assert [t.name for t in targets.resolve("rpi4, myboard,rpi4")] == ["rpi4", "myboard"]
    assert [t.name for t in targets.resolve(["rpi4", "rpi5"])] == ["rpi4", "rpi5"]


# -- errors -------------------------------------------------------------------------------------------------------
def test_unknown_target_lists_the_known_ones(tmp_path):
    with pytest.raises(TargetError, match=r"unknown target 'rpi9'; known targets: .*rpi4.*rpi5"):
        targets.get("rpi9")
    with pytest.raises(TargetError, match="unknown target 'rpi9'"):
        burnedge.export(tiny_cnn(), tmp_path / "x.bedge", target="rpi4,rpi9")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(TargetError, match="no target given"):
        targets.resolve(" , ")


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda s: s.replace("cores = 4", 'cores = "four"'), r"field 'cores' must be a whole number, not str"),
        (lambda s: s.replace("cores = 4", "cores = 0"), r"field 'cores' must be at least 1"),
        (lambda s: s.replace("ram_mb = 512", "ram_mb = true"), r"field 'ram_mb' must be a whole number, not bool"),
        (lambda s: s.replace('cc = "aarch64-linux-gnu-gcc"\n', ""), r"missing required field 'compiler.cc'"),
        (lambda s: s.replace("cores = 4", "corez = 4"), r"unknown field 'corez' \(known: description, os"),
        (lambda s: s.replace('sysroot = "', 'sysrot = "'), r"unknown field 'emulator.sysrot'"),
        (lambda s: s.replace('flags = ["-mcpu=cortex-a72"]', "flags = [1]"), r"'compiler.flags' must be a list of str"),
        (lambda s: s.replace('os = "linux"', 'os = "zephyr"'), r"'os' must be one of linux, baremetal, not 'zephyr'"),
        (lambda s: s.replace('triple = "aarch64-linux-gnu"\n', ""), r"missing required field 'triple'"),
        (
            lambda s: s.replace('command = ["qemu-aarch64", "-cpu", "cortex-a72"]', "command = []"),
            "must name a program",
        ),
        (lambda s: s.replace("[compiler]", "[compiler"), r"not valid TOML"),
    ],
)
def test_a_bad_file_names_the_file_and_the_field(tmp_path, edit, message):
    path = _write(tmp_path, "bad", edit(RPI4))
    with pytest.raises(TargetError, match=message) as info:
        targets.load_file(path)
    assert str(path) in str(info.value)
    with pytest.raises(TargetError, match=message):
        targets.available([tmp_path])


def test_a_bad_file_name(tmp_path):
    with pytest.raises(TargetError, match="file name must be lower-case"):
        targets.load_file(_write(tmp_path, "My Board", RPI4))
    with pytest.raises(TargetError, match="not a folder of target files"):
        targets.available([tmp_path / "nowhere"])


def test_a_missing_cross_compiler_names_the_package(tmp_path):
    fake = RPI4.replace('cc = "aarch64-linux-gnu-gcc"', 'cc = "xtensa-esp32-elf-gcc"')
    fake = fake.replace('package = "gcc-aarch64-linux-gnu"', 'package = "gcc-xtensa-lx106"')
    path = _write(tmp_path, "esp", fake)
    with pytest.raises(TargetError, match=r"cross compiler 'xtensa-esp32-elf-gcc' is not installed; install it "
                       r"with: apt-get install gcc-xtensa-lx106"):  # fmt: skip
        toolchain(targets.load_file(path))
    with pytest.raises(TargetError, match="apt-get install gcc-xtensa-lx106"):
        burnedge.export(tiny_cnn(), tmp_path / "x.bedge", target=str(path))
    assert main(["export", str(_onnx(tmp_path)), "-o", str(tmp_path / "y.bedge"), "--target", str(path)]) == 2


def _onnx(tmp_path: Path) -> Path:
    import onnx

    path = tmp_path / "tiny.onnx"
    onnx.save(tiny_cnn(), str(path))
    return path


def test_a_model_too_big_for_the_board_is_refused(tmp_path):
    path = _write(tmp_path, "small", RPI4.replace("ram_mb = 512", "ram_mb = 1").replace("aarch64-linux-gnu-", ""))
    small = targets.load_file(path)
    with pytest.raises(TargetError, match=r"more than the 1 MB of RAM of target 'small'"):
        small.check_fits(2**20 + 1)
    small.check_fits(2**20)
    with pytest.raises(TargetError, match=r"the model needs [\d,]+ bytes \(arena \+ weights\), more than the 1 MB"):
        burnedge.export(tiny_cnn(big_weights=40_000), tmp_path / "big.bedge", target=str(path))


def test_missing_qemu_names_the_package(host_bundle, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no qemu-aarch64 (nor anything else) on PATH
    with pytest.raises(EmulationError, match=r"QEMU for target 'rpi4' is not installed \('qemu-aarch64' not found\); "
                       r"install it with: apt-get install qemu-user"):  # fmt: skip
        emulate(host_bundle, "rpi4")


def test_docker_without_an_engine_says_so(host_bundle, tmp_path, monkeypatch):
    fake = tmp_path / "docker"
    fake.write_text(
        "#!/bin/sh\necho 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock.' >&2\nexit 1\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(EmulationError, match=r"no Docker engine is running on this machine \(`docker info` failed: "
                       r"Cannot connect to the Docker daemon.*use --runner qemu"):  # fmt: skip
        emulate(host_bundle, "rpi4", runner="docker")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(EmulationError, match="the docker command is not installed"):
        emulate(host_bundle, "rpi4", runner="docker")
    with pytest.raises(EmulationError, match="unknown runner 'podman'"):
        emulate(host_bundle, "rpi4", runner="podman")


def test_a_target_the_bundle_lacks(host_bundle):
    with pytest.raises(EmulationError, match=r"no library for target 'rpi4' \(it has: host\); export it with --target"):
        emulate(host_bundle, "rpi4")


# -- which library a machine loads --------------------------------------------------------------------------------
def test_pick_library_by_triple_and_features(monkeypatch):
    here = {"system": "Linux", "machine": "aarch64", "cpu": "abc"}
    libs = [
        {"path": "lib/host/model.so", "system": "Linux", "machine": "x86_64", "cpu": "xyz"},
        {"path": "lib/rpi4/model.so", "system": "Linux", "triple": "aarch64-linux-gnu", "requires": ["fp", "asimd"]},
        {
            "path": "lib/rpi5/model.so",
            "system": "Linux",
            "triple": "aarch64-linux-gnu",
            "requires": ["fp", "asimd", "asimddp"],
        },
    ]
    monkeypatch.setattr(host, "triple", lambda: "aarch64-linux-gnu")
    monkeypatch.setattr(host, "features", lambda: frozenset({"fp", "asimd", "crc32", "asimddp"}))
    assert pick_library(libs, here)["path"] == "lib/rpi5/model.so"  # the most specific that fits
    monkeypatch.setattr(host, "features", lambda: frozenset({"fp", "asimd", "crc32"}))
    assert pick_library(libs, here)["path"] == "lib/rpi4/model.so"
    monkeypatch.setattr(host, "triple", lambda: "arm-linux-gnueabihf")
    assert pick_library(libs, here) is None
    native = {**here, "cpu": "abc", "path": "lib/host/model.so"}
    assert pick_library([*libs, native], here) is native  # built for this very CPU wins


def test_host_features_and_triple():
    assert host.triple().startswith(os.uname().machine.replace("armv7l", "arm"))
    assert isinstance(host.features(), frozenset)


def test_a_bundle_without_a_library_for_this_host_is_rebuilt(tmp_path):
    path = burnedge.export(tiny_cnn(), tmp_path / "rpi4.bedge", target="rpi4", test_vectors=1)
    b = bundle.read(path)
    assert b.targets == ["rpi4"] and b.manifest["libraries"]["rpi4"]["requires"] == ["fp", "asimd", "crc32"]
    feeds, refs = b.vectors()[0]
    got = burnedge.Session(b).run(feeds)  # no library runs on x86: rebuilt here from the bundle's source
    np.testing.assert_allclose(got["y"], refs["y"], rtol=1e-5, atol=1e-7)


def test_a_bundle_is_rebuilt_from_its_own_kernels(host_bundle, monkeypatch):
    """Kernels that differ from this burnedge's: the library is built from the bundle's (a tiny stand-in here)."""
    b = bundle.read(host_bundle)
    monkeypatch.setattr(host, "fingerprint", lambda: {"system": "Linux", "machine": "x86_64", "cpu": "other"})
    b.members = {n: d for n, d in b.members.items() if not n.startswith("src/kernels/")}
    b.members["src/kernels/burnedge.h"] = b"#include <stddef.h>\n#include <stdint.h>\nint be_answer(void);\n"
    b.members["src/kernels/answer.c"] = b'#include "burnedge.h"\nint be_answer(void) { return 42; }\n'
    b.members["src/model.c"] = (
        b'#include "burnedge.h"\nsize_t be_model_arena_bytes(void) { return 0; }\n'
        b"int be_model_run(uint8_t *a, const uint8_t *w, int t) { (void)a; (void)w; (void)t; return be_answer(); }\n"
    )
    lib = c_load.library(b)
    assert lib.parent == build.cache_dir() and (c_load.kernel_dir(b) / "answer.c").is_file()
    assert c_load.kernel_dir(b).parent == build.cache_dir() / "kernels"
    import cffi

    ffi = cffi.FFI()
    ffi.cdef("int be_model_run(uint8_t *, const uint8_t *, int);")
    assert ffi.dlopen(str(lib)).be_model_run(ffi.NULL, ffi.NULL, 1) == 42
    b.members["src/kernels/answer.c"] = b"this is not C"
    with pytest.raises(bundle.BundleError, match="no library in the bundle runs on this host .* own kernels failed"):
        c_load.library(b)


# -- the runner and the CLI ---------------------------------------------------------------------------------------
def test_the_runner_on_the_host(host_bundle, tmp_path):
    r = emulate(host_bundle, "host", keep=tmp_path / "run")
    assert r.ok and not r.exact and r.command[0] == "./runner" and len(r.run_us) == 2
    assert {c.output for c in r.checks} == {"y", "k"} and r.arena_bytes == bundle.read(host_bundle).arena_bytes
    want = burnedge.Session(host_bundle).run(bundle.read(host_bundle).vectors()[1][0])
    assert np.array_equal(r.outputs[1]["y"], want["y"]) and np.array_equal(r.outputs[1]["k"], want["k"])
    job = (tmp_path / "run" / "job.txt").read_text()
    assert job.startswith("burnedge-runner 1\n") and "output 1 " in job and " i64 0 k" in job
    proc = subprocess.run(["./runner", "job.txt"], cwd=tmp_path / "run", capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.rstrip().endswith("PASS"), proc.stdout + proc.stderr
    ref = tmp_path / "run" / "vectors" / "0" / "ref_1.bin"  # the argmax, int64: must match exactly
    ref.write_bytes((np.frombuffer(ref.read_bytes(), np.int64) + 1).tobytes())
    proc = subprocess.run(["./runner", "job.txt"], cwd=tmp_path / "run", capture_output=True, text=True)
    assert proc.returncode == 1 and "MISMATCH k" in proc.stdout and proc.stdout.rstrip().endswith("FAIL")
    (tmp_path / "run" / "job.txt").write_text("burnedge-runner 2\n")
    proc = subprocess.run(["./runner", "job.txt"], cwd=tmp_path / "run", capture_output=True, text=True)
    assert proc.returncode == 2 and "job format version 2; this runner reads version 1" in proc.stderr


def test_cli_targets(capsys, tmp_path):
    assert main(["targets"]) == 0
    out = capsys.readouterr().out
    for name in ("host", *BOARDS):
        assert f"\n{name} " in "\n" + out
    assert "qemu-aarch64 -cpu cortex-a72" in out
    _write(tmp_path, "myboard", RPI4)
    assert main(["targets", "--json", "--targets-dir", str(tmp_path)]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["myboard"]["ram_mb"] == 512 and rows["rpi5"]["features"][-1] == "asimddp"


def test_cli_emulate_errors(host_bundle, capsys):
    assert main(["emulate", str(host_bundle), "--target", "nope"]) == 2
    assert "unknown target 'nope'; known targets:" in capsys.readouterr().err
    assert main(["emulate", str(host_bundle), "--target", "host"]) == 0
    out = capsys.readouterr().out
    assert "arena" in out and "max error" in out and out.rstrip().endswith("PASS")


def test_an_illegal_instruction_is_named(tmp_path):
    """What QEMU does when the library uses an instruction the modelled CPU lacks: the runner dies of SIGILL."""
    fake = 'description = "sigill"\nos = "linux"\nnative = true\n[compiler]\ncc = "cc"\npackage = "gcc"\n'
    fake += '[emulator]\ncommand = ["sh", "-c", "kill -s ILL $$"]\n'  # the host's compiler, a failing "emulator"
    path = _write(tmp_path, "sigill", fake)
    b = burnedge.export(tiny_cnn(), tmp_path / "b.bedge", target=str(path), test_vectors=1)
    with pytest.raises(EmulationError, match="an illegal instruction: the library uses an instruction this CPU lacks"):
        emulate(b, targets.load_file(path))


def test_a_target_names_its_kernel_sets(tmp_path):
    assert toolchain(targets.get("rpi4")).sets() == ("reference", "arm")
    assert toolchain(targets.get("riscv64")).sets() == ("reference",)
    bad = _write(tmp_path, "badsets", RPI4.replace('features = ["fp", "asimd"]', 'features = ["fp"]\nkernels = "arm"'))
    with pytest.raises(TargetError, match=r"field 'kernels' must be a list of strings, not str"):
        targets.load_file(bad)
    odd = _write(tmp_path, "oddsets", RPI4.replace('features = ["fp", "asimd"]', 'kernels = ["reference", "sse9"]'))
    with pytest.raises(burnedge.BurnedgeError, match="unknown kernel set 'sse9'"):
        burnedge.export(tiny_cnn(), tmp_path / "x.bedge", target=str(odd))
    assert not (tmp_path / "x.bedge").exists()
