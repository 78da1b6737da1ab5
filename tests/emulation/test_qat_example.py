"""The end-to-end example (burnedge.examples.qat_digits) on its quick path, on the CPU: train, QAT, export, and the
held-out images' count of correct samples equal on the train side, the C backend, rpi4 (QEMU user mode) and a
Cortex-M4 (firmware under qemu-system-arm)."""

from __future__ import annotations

import re

import pytest

torch = pytest.importorskip("torch", reason="the example trains with the train extra")
pytest.importorskip("sklearn", reason="the digits come with scikit-learn (requirements-test.txt)")
from burnedge.examples import qat_digits  # noqa: E402


@pytest.mark.slow
@pytest.mark.boards
def test_the_quick_example_counts_the_same_on_every_target(capsys):
    threads = torch.get_num_threads()
    try:
        status = qat_digits.main(["--quick", "--device", "cpu"])
    finally:
        torch.set_num_threads(threads)
    out = capsys.readouterr().out
    assert status == 0, out
    steps = {"qat": r"QAT int8 \(2 epochs\)", "c": r"bundle on C \([\d,]+ B\)", "rpi4": r"rpi4 \(QEMU user\)",
             "m4": r"cortex-m4 \(qemu-system-arm\)"}  # fmt: skip
    counts = {k: re.search(p + r"\s+[\d.]+%\s+\((\d+)/\d+\)", out) for k, p in steps.items()}
    counts = {k: int(m.group(1)) for k, m in counts.items() if m}
    assert sorted(counts) == ["c", "m4", "qat", "rpi4"], out
    assert counts["qat"] == counts["c"] and counts["rpi4"] == counts["m4"], out
    assert re.search(r"rpi4 \(QEMU user\).*train side (\d+)", out).group(1) == str(counts["rpi4"]), out
    assert "train side == the bundle on C, rpi4 and cortex-m4, bit for bit: yes" in out
