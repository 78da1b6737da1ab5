"""Microcontroller firmware: the Cortex-M targets' files, the refusal of a model too large for a target (at export
and at `firmware`), the test firmware under QEMU system mode from the CLI (int8 bit-exact with the host, memory
report from the ELF, measured stack, deterministic instruction counts), and the library template built from its
own Makefile and from CMake with arm-none-eabi-gcc."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest

import burnedge
from burnedge import firmware, targets
from burnedge.cli import main

from .models import calibration, tiny_cnn, tiny_cnn_float_only

CORES = ("cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55")
boards = pytest.mark.boards  # tests/system-packages.txt: gcc-arm-none-eabi, qemu-system-arm ...


def test_cortex_m_targets_describe_their_memories_and_machines():
    for name in CORES:
        t = targets.get(name)
        assert t.os == "baremetal" and t.cc == "arm-none-eabi-gcc" and f"-mcpu={name}" in t.flags
        assert t.emulator is not None and t.emulator.command[0] == "qemu-system-arm" and t.emulator.clock_hz
        flash, ram = t.memory("flash"), t.memory("ram")
        assert flash.size >= 2**19 and ram.size >= 2**19 and flash.base != ram.base
    assert "-mfloat-abi=soft" in targets.get("cortex-m3").flags  # no FPU on the M3
    assert "-mfpu=fpv4-sp-d16" in targets.get("cortex-m4").flags


def test_a_bare_metal_target_without_its_memories_is_refused(tmp_path):
    text = (targets.BUILTIN_DIR / "cortex-m4.toml").read_text()
    without_ram = re.sub(r"\[memory\.ram\][^\[]*", "", text)
    (tmp_path / "board.toml").write_text(without_ram)
    with pytest.raises(targets.TargetError, match=r"board.toml: missing required table 'memory.ram'"):
        targets.load_file(tmp_path / "board.toml")
    (tmp_path / "board.toml").write_text(text.replace("size = 0x400000", "size = true", 1))
    with pytest.raises(targets.TargetError, match=r"field 'memory.flash.size' must be a whole number"):
        targets.load_file(tmp_path / "board.toml")


def test_a_model_too_large_for_a_target_is_refused_with_the_numbers(tmp_path):
    big = tiny_cnn(big_weights=20_000)  # a Gemm of 8 x 20,005 floats: 640 KB of weights, the M55's flash is 512 KiB
    with pytest.raises(targets.TargetError) as err:
        burnedge.export(big, tmp_path / "big.bedge", target="cortex-m55")
    said = str(err.value)
    weights = int(re.search(r"flash needs ([\d,]+) bytes \(weights\) of 524,288", said).group(1).replace(",", ""))
    assert weights >= 8 * 20_005 * 4 and "ram needs" in said and "too many" in said, said
    assert not (tmp_path / "big.bedge").exists()
    host = burnedge.export(big, tmp_path / "host.bedge")  # the same bundle for the host, then firmware of it
    with pytest.raises(targets.TargetError, match=r"does not fit target 'cortex-m55'.*flash needs [\d,]+ bytes"):
        firmware.firmware(host, "cortex-m55", tmp_path / "fw")
    assert main(["firmware", str(host), "--target", "cortex-m55", "-o", str(tmp_path / "fw")]) == 2
    assert not (tmp_path / "fw").exists()


@pytest.fixture(scope="module")
def tiny_int8(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fw") / "tiny.bedge"
    return burnedge.export(tiny_cnn_float_only(), out, "cortex-m4", quantize="int8", calibration=calibration())


@boards
def test_the_test_firmware_passes_in_qemu_from_the_cli(tiny_int8, tmp_path, capsys):
    keep = tmp_path / "fw"
    assert main(["emulate", str(tiny_int8), "--target", "cortex-m4", "--keep", str(keep)]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("PASS") and "bit-exact (an int8 bundle)" in out and "mps2-an386" in out
    report = json.loads((keep / firmware.REPORT).read_text())
    b = burnedge.bundle.read(tiny_int8)
    assert report["ram"]["arena"] == b.arena_bytes and report["flash"]["weights"] == b.weight_bytes
    assert report["ram"]["stack_measured"] and 0 < report["ram"]["stack"] < report["ram"]["stack_reserved"]
    assert report["flash"]["code"] > 1000 and report["flash"]["test_vectors"] > 0
    counts = report["instructions_per_inference"]
    assert len(counts) == len(b.vectors()) and min(counts) > 1000
    again = firmware.emulate(b, "cortex-m4")  # -icount: the same count on every run, whatever the load
    assert again.run.instructions == counts and again.run.ok
    assert abs(again.run.clock_hz / targets.get("cortex-m4").emulator.clock_hz - 1) < 0.01  # the loop agrees
    header = (keep / "model.h").read_text()  # a microcontroller bundle takes and gives int8, its qparams in model.h
    q = b.manifest["inputs"][0]["quantization"]
    assert b.manifest["inputs"][0]["dtype"] == "int8" and b.manifest["outputs"][0]["dtype"] == "int8"
    assert f"#define BE_INPUT_0_ZERO_POINT {q['zero_point']}" in header and "BE_OUTPUT_0_SCALE" in header
    host = burnedge.Session(b).run(b.vectors()[0][0])
    assert all(np.array_equal(host[n], again.run.outputs[0][n]) for n in host)  # bit for bit the host library's


@boards
def test_a_firmware_that_gets_a_wrong_answer_says_fail(tiny_int8, tmp_path):
    fw = firmware.firmware(tiny_int8, "cortex-m3", tmp_path / "fw")
    ref = (fw.folder / "vectors.c").read_text()
    broken = re.sub(r"(be_ref_0_0\[\d+\][^{]*\{\n)(\d+)", lambda m: m.group(1) + str((int(m.group(2)) + 1) % 256), ref)
    assert broken != ref
    (fw.folder / "vectors.c").write_text(broken)
    elf = firmware.build(fw.folder, fw.target)
    r = firmware.run(burnedge.bundle.read(tiny_int8), fw.target, elf)
    assert r.verdict.startswith("FAIL") and not r.ok  # the firmware's own check caught it


@boards
@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed (tests/system-packages.txt)")
def test_the_library_template_builds_from_make_and_cmake(tiny_int8, tmp_path):
    fw = firmware.firmware(tiny_int8, "cortex-m4", tmp_path / "lib", template="library")
    assert fw.built.is_file() and {"model.h", "Makefile", "CMakeLists.txt"} <= {p.name for p in fw.folder.iterdir()}
    header = (fw.folder / "model.h").read_text()
    assert f"#define BE_ARENA_BYTES {burnedge.bundle.read(tiny_int8).arena_bytes}u" in header
    nm = subprocess.run(["arm-none-eabi-nm", str(fw.built)], capture_output=True, text=True, check=True).stdout
    assert re.search(r" T be_invoke$", nm, re.M) and re.search(r" R be_weights$", nm, re.M)
    assert not re.search(r" U (malloc|free|printf|puts|_sbrk)$", nm, re.M)  # no heap, no stdio
    toolchain = tmp_path / "arm.cmake"
    toolchain.write_text(
        "set(CMAKE_SYSTEM_NAME Generic)\nset(CMAKE_SYSTEM_PROCESSOR arm)\nset(CMAKE_C_COMPILER arm-none-eabi-gcc)\n"
        "set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)\n"
    )
    build = tmp_path / "cmake-build"
    cfg = ["cmake", "-S", str(fw.folder), "-B", str(build), f"-DCMAKE_TOOLCHAIN_FILE={toolchain}"]
    subprocess.run(cfg, capture_output=True, text=True, check=True)
    proc = subprocess.run(["cmake", "--build", str(build), "-j2"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert (build / "libburnedge_model.a").is_file()


@boards
def test_a_firmware_the_linker_cannot_place_is_refused_with_the_numbers(tiny_int8, tmp_path):
    text = (targets.BUILTIN_DIR / "cortex-m4.toml").read_text()
    small = tmp_path / "small-m4.toml"  # flash for the weights, not for the code too
    small.write_text(text.replace("size = 0x400000  # 4,194,304 bytes", "size = 0x1000", 1))
    board = targets.load_file(small)
    assert board.memory("flash").size == 4096 > burnedge.bundle.read(tiny_int8).weight_bytes
    with pytest.raises(targets.TargetError, match=r"does not fit target 'small-m4'.*flash needs ([\d,]+) bytes "
                       r"\(the linked firmware\) of 4,096, [\d,]+ too many"):  # fmt: skip
        firmware.firmware(tiny_int8, board, tmp_path / "fw")


@boards
def test_a_stack_that_overflows_its_reserve_says_fail(tiny_int8, tmp_path):
    text = (targets.BUILTIN_DIR / "cortex-m4.toml").read_text()
    (tmp_path / "tight-m4.toml").write_text(re.sub(r"(?m)^stack_bytes = \d+", "stack_bytes = 128", text))
    fw = firmware.emulate(tiny_int8, targets.load_file(tmp_path / "tight-m4.toml"))
    assert not fw.run.ok and "the stack used all of its 128 bytes" in fw.run.verdict
    assert fw.report["ram"]["stack"] == 128


def test_an_untrusted_bundle_is_never_built(tiny_int8, tmp_path):
    unsigned = tmp_path / "unsigned.bedge"
    with zipfile.ZipFile(tiny_int8) as src, zipfile.ZipFile(unsigned, "w") as dst:
        for info in src.infolist():
            if info.filename != "signature.json":
                dst.writestr(info, src.read(info))
    with pytest.raises(burnedge.BurnedgeError, match="refusing to run this bundle: it is not signed"):
        firmware.firmware(unsigned, "cortex-m4", tmp_path / "fw")
    assert main(["firmware", str(unsigned), "--target", "cortex-m4", "-o", str(tmp_path / "fw")]) == 2
    assert main(["emulate", str(unsigned), "--target", "cortex-m4"]) == 2
    assert not (tmp_path / "fw").exists()
