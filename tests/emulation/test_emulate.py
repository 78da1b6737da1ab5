"""Every target under QEMU user mode: tiny models and the model suite (MLPerf Tiny and MobileNetV2), float and int8,
exported once for all targets and emulated for each (int8 bit-exact with the host, float within 1e-4 relative);
and the Python runtime in an emulated arm64 Debian userland (scripts/arm64_userland.sh)."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import numpy as np
import pytest

import burnedge
from burnedge.emulate import emulate

from .. import system
from . import matrix
from .models import calibration, tiny_cnn, tiny_cnn_float_only

pytestmark = [pytest.mark.slow, pytest.mark.boards]  # boards: tests/system-packages.txt
REPO = Path(__file__).resolve().parents[2]
TOLERANCE = 1e-4  # README: the bit-exactness contract


def _assert_contract(row: matrix.Row) -> None:
    assert row.ok, f"{row.model} {row.kind} on {row.target}: FAIL (max relative error {row.relative:.3g})"
    if row.kind == "int8":
        assert row.exact and row.max_abs == 0 and row.same_as_host, f"{row.model} int8 on {row.target}: not bit-exact"
    else:
        assert not row.exact and row.relative <= TOLERANCE


@pytest.fixture(scope="module")
def tiny_bundles(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("tiny")
    return {
        "float": matrix.export(tiny_cnn(), "float", out / "float.bedge", matrix.CROSS),
        "int8": matrix.export(tiny_cnn_float_only(), "int8", out / "int8.bedge", matrix.CROSS, calibration()),
    }


@pytest.mark.parametrize("target", matrix.CROSS)
def test_tiny_models_on_every_target(tiny_bundles, target):
    for kind, path in tiny_bundles.items():
        (row,) = matrix.check(path, (target,), "tiny_cnn", kind)
        _assert_contract(row)


def test_threads_and_the_cli(tiny_bundles, capsys):
    one, two = emulate(tiny_bundles["float"], "rpi4"), emulate(tiny_bundles["float"], "rpi4", threads=2)
    for a, b in zip(one.outputs, two.outputs):
        assert all(np.array_equal(a[n], b[n]) for n in a)  # results do not depend on the thread count
    from burnedge.cli import main

    assert main(["emulate", str(tiny_bundles["int8"]), "--target", "rpi3,riscv64"]) == 0
    out = capsys.readouterr().out
    assert out.count("PASS") == 2 and "bit-exact (an int8 bundle)" in out and "under qemu-arm -cpu cortex-a15" in out


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory) -> Path:
    env = os.environ.get("BURNEDGE_MODEL_CACHE")
    return Path(env) if env else tmp_path_factory.mktemp("models")


@pytest.mark.parametrize("name", matrix.SUITE)
def test_suite_model_on_every_target(name, model_cache, tmp_path):
    s = matrix.suite()
    path = s.build_model(name, model_cache)
    cal = [s.example_feeds(path, seed=i) for i in range(4 if name == "mobilenet_v2" else 16)]
    for kind in ("float", "int8"):
        bundle = matrix.export(path, kind, tmp_path / f"{name}-{kind}.bedge", matrix.CROSS, cal)
        for row in matrix.check(bundle, matrix.CROSS, name, kind):
            _assert_contract(row)


# -- the Python runtime on an emulated arm64 board -------------------------------------------------------------------
def _arm64_unavailable() -> str | None:
    """Why scripts/arm64_userland.sh cannot run here, or None."""
    if os.geteuid() != 0:
        return "it needs root (debootstrap, binfmt_misc, chroot): run the tests as root (`sudo scripts/test`)"
    gone = system.missing(("debootstrap", "qemu-user-static"))
    if gone:
        return f"{' '.join(gone)} not installed: `apt-get install {' '.join(gone)}` (or run `scripts/test` as root)"
    cache = Path(os.environ.get("BURNEDGE_ARM64_CACHE") or REPO / ".cache" / "arm64-userland")
    if not any(cache.glob("*/.burnedge-userland")):
        try:
            socket.create_connection(("deb.debian.org", 80), timeout=10).close()
        except OSError as exc:
            return f"no cached userland and deb.debian.org is unreachable ({exc})"
    return None


def test_python_runtime_in_an_arm64_debian_userland(tmp_path):
    why = _arm64_unavailable()
    if why is not None:  # under CI or BURNEDGE_REQUIRE_ARM64 (.ci/run) this fails instead of skipping
        system.unavailable(f"the emulated arm64 userland cannot run here: {why}")
    both = ("rpi4", "rpi5")
    bundles = [
        str(burnedge.export(tiny_cnn(), tmp_path / "float.bedge", target=both)),
        str(
            burnedge.export(
                tiny_cnn_float_only(), tmp_path / "int8.bedge", target=both, quantize="int8", calibration=calibration()
            )
        ),  # fmt: skip
    ]
    script = str(REPO / "scripts" / "arm64_userland.sh")
    for cpu, expect in (("cortex-a72", "rpi4"), ("cortex-a76", "rpi5")):
        proc = subprocess.run([script, "--cpu", cpu, "--expect", expect, *bundles], capture_output=True, text=True,
                              timeout=3600)  # fmt: skip
        log = proc.stdout + proc.stderr
        assert proc.returncode == 0, log
        assert "machine    aarch64" in log and f"library lib/{expect}/model.so" in log and log.count("bundle ") == 2
        assert "bit-exact" in log and proc.stdout.rstrip().splitlines()[-2] == "PASS"
