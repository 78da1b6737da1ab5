"""The MLPerf Tiny networks of the model suite as int8 firmware, from the CLI, in QEMU on every Cortex-M target:
bit-exact with the host's reference, and RAM (arena + measured stack + statics) below TensorFlow Lite Micro's
minimum arena for the same network (README: microcontrollers). One bundle per network for all five cores.

``python -m tests.emulation.test_firmware_mlperf`` prints the README's table."""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
from pathlib import Path

import pytest

import burnedge
from burnedge.cli import main

from . import matrix

CORES = ("cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55")
# TFLM's minimum arenas for the official MLPerf Tiny int8 models (measured on a 64-bit host build), bytes
TFLM_ARENA = {"ds_cnn": 24_272, "mobilenet_v1_025": 103_672, "resnet8": 55_984, "fc_autoencoder": 4_632}
pytestmark = [pytest.mark.slow, pytest.mark.boards]


def _bundle(name: str, folder: Path) -> Path:
    """The int8 bundle of suite model `name` for every core, calibrated on 8 of the suite's example inputs."""
    s = matrix.suite()
    onnx = s.build_model(name, matrix.model_cache())
    out = folder / f"{name}.bedge"
    calibration = [s.example_feeds(onnx, seed=i) for i in range(8)]
    return burnedge.export(onnx, out, target=",".join(CORES), quantize="int8", calibration=calibration,
                           keep_float=(), test_vectors=1, progress=False)  # fmt: skip


def measure(name: str, folder: Path) -> list[dict]:
    """One row per core: `burnedge emulate --keep`, then its memory report."""
    bundle = _bundle(name, folder)
    rows = []
    for core in CORES:
        keep = folder / f"{name}-{core}"
        status = main(["emulate", str(bundle), "--target", core, "--keep", str(keep)])
        report = json.loads((keep / "memory.json").read_text())
        rows.append({"model": name, "core": core, "status": status, **report})
    return rows


@pytest.mark.parametrize("name", sorted(TFLM_ARENA))
def test_mlperf_tiny_int8_firmware_on_every_core(name, tmp_path, capsys):
    rows = measure(name, tmp_path)
    out = capsys.readouterr().out
    assert out.count("bit-exact (an int8 bundle)") == len(CORES), out
    for r in rows:
        assert r["status"] == 0, f"{name} on {r['core']}: FAIL\n{out}"
        ram = r["ram"]
        assert ram["stack_measured"] and ram["total"] == ram["arena"] + ram["stack"] + ram["statics"]
        assert ram["total"] < TFLM_ARENA[name], f"{name} on {r['core']}: RAM {ram} not below TFLM's arena"
        assert min(r["instructions_per_inference"]) > 10_000


if __name__ == "__main__":  # the README table
    with tempfile.TemporaryDirectory() as tmp:
        print("| network | core | flash (code + weights + tables) | RAM (arena + stack + statics) | instructions |")
        print("|---|---|---|---|---|")
        for name in sys.argv[1:] or sorted(TFLM_ARENA):
            with contextlib.redirect_stdout(sys.stderr):
                rows = measure(name, Path(tmp))
            for r in rows:
                f, m = r["flash"], r["ram"]
                print(f"| {name} | {r['core']} | {f['total']:,} ({f['code']:,} + {f['weights']:,} + {f['tables']:,}) "
                      f"| {m['total']:,} ({m['arena']:,} + {m['stack']:,} + {m['statics']:,}) "
                      f"| {r['instructions_per_inference'][0]:,} |")  # fmt: skip
