"""benchmarks/bench_ddp.py on the CPU: one gloo process against two at the same global batch, a few steps each,
then each run's checkpoints rebuilt into an int8 bundle on the C backend.

What the table claims and a test can check: the C bundle's count equals the count the trainer reported, for both
runs; the two processes each trained on their own half of every global batch (their sample counts are half the
one-process run's, and their per-class histograms differ yet add up to it: two processes fed the same batches, or
all of them, fail this); the throughput is a positive number. Bad flags are refused with the numbers.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="burnedge.train needs the train extra")
pytest.importorskip("sklearn", reason="the digits come with scikit-learn (requirements-test.txt)")

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_ddp.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_ddp", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_ddp"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("bench_ddp", None)


GLOBAL, STEPS = 64, 19  # 1,258 images // 64: 19 steps of one epoch


@pytest.mark.slow  # three fresh interpreters import torch, twice a bundle is compiled: ~30 s of CPU
def test_two_gloo_processes_train_their_shares_and_the_bundle_scores_what_the_trainer_said(bench, tmp_path):
    rows = bench.bench(2, "cpu", GLOBAL, repeat=1, epochs=1, qat_epochs=1, warmup=2, calibration=32, heldout=100,
                       folder=tmp_path, timeout=240, quiet=True)  # fmt: skip
    assert [(r.processes, r.global_batch, r.per_process) for r in rows] == [(1, GLOBAL, GLOBAL), (2, GLOBAL, 32)]
    for r in rows:
        assert r.heldout == 100
        assert r.c_int8 == r.trainer_int8, (r.processes, r.c_int8, r.trainer_int8)
        assert r.trainer_int8 > 50  # trained: far above the 10 a guess gets
        assert r.samples_per_s > 0
        assert (tmp_path / f"p{r.processes}" / "digits_qat.bedge").is_file()
    (one,), (a, b) = rows[0].ranks, rows[1].ranks
    assert one["steps"] == a["steps"] == b["steps"] == STEPS
    assert one["samples"] == STEPS * GLOBAL and a["samples"] == b["samples"] == STEPS * GLOBAL // 2
    assert [x + y for x, y in zip(a["classes"], b["classes"])] == one["classes"]
    assert a["classes"] != b["classes"]
    assert (a["world"], b["world"], a["rank"], b["rank"]) == (2, 2, 0, 1)
    table = bench.table(rows)
    assert table.count("\n") == 3 and "| 2 |" in table and "1.00x" in table


def test_bad_flags_say_the_numbers(bench, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--device", "cpu", "--gpus", "3", "--global-batch", "64"])
    assert "--global-batch 64 is not divisible by 3 processes" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--device", "cpu", "--gpus", "2", "--global-batch", "4096", "--repeat", "1"])
    assert "more than the 1,258 training samples" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--device", "cpu", "--gpus", "2", "--global-batch", "64", "--repeat", "1", "--epochs", "1",
                    "--warmup", "19"])  # fmt: skip
    assert "19 steps per epoch x 1 epochs = 19 steps" in capsys.readouterr().err
    visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
    with pytest.raises(SystemExit):
        bench.main(["--device", "cuda", "--gpus", str(visible + 1)])
    assert f"--gpus {visible + 1}: this machine shows {visible} CUDA GPU(s)" in capsys.readouterr().err
