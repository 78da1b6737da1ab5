"""Data-parallel Learner on the CPU (gloo): two processes with batch B end with the weights of one process with
batch 2B, for a torch DataLoader (DistributedSampler), a plain list of numpy batches (dealt out) and burnedge's
ArrayLoader shuffled anew each epoch (dealt out: every process must reshuffle alike).

Tolerance: both runs compute the same per-sample gradients at the same weights; they differ only in the order
float32 sums are taken (a mean of 8 against the mean of two means of 4, gloo's all-reduce), a few ulps
(~1e-7 relative) per step. Eight SGD steps (lr 0.1, momentum 0.9) on weights of size ~0.3 keep that below 1e-6
(measured: 6e-8 for the DataLoader, 1.5e-8 for the list);
the test allows 1e-5, and checks that a run that got the sharding wrong (one process at batch B) is off by more
than 1e-3 (measured: 0.19), so the comparison can fail.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import numpy as np
import pytest

import burnedge
from burnedge import nn

torch = pytest.importorskip("torch", reason="burnedge.train needs the train extra")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

from burnedge.train import Learner, to_torch  # noqa: E402
from burnedge.train.data import ArrayLoader  # noqa: E402

B, N, EPOCHS = 4, 16, 2
KINDS = ("dataloader", "list", "shuffled")


class Net(nn.Module):  # no BatchNorm: DDP normalises each process's batch on its own (as torch does)
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3, padding=1)
        self.fc = nn.Linear(3 * 4 * 4, 3)

    def forward(self, x):
        return self.fc(nn.functional.relu(self.conv(x)).flatten(1))


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, 1, 4, 4)).astype(np.float32)
    return x, rng.integers(0, 3, N).astype(np.int64)


def _fit(kind: str, batch: int, folder: Path | None = None) -> tuple[dict, list]:
    x, y = _data()
    nn.init.manual_seed(0)
    module = to_torch(burnedge.trace(Net(), {"x": (2, 1, 4, 4)}))
    if kind == "shuffled":  # burnedge's own loader, reshuffled each epoch (set_epoch) in every process alike
        loader = ArrayLoader(x, y, batch, shuffle=True)
    elif kind == "dataloader":
        ds = torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
        loader = torch.utils.data.DataLoader(ds, batch_size=batch)
    else:
        loader = [(x[i : i + batch], y[i : i + batch]) for i in range(0, N, batch)]
    log = None if folder is None else folder / f"{kind}.jsonl"
    learner = Learner(module, loader, optimizer="sgd", lr=0.1, dashboard=None, checkpoint_dir=folder, log_file=log)
    history = learner.fit(EPOCHS)
    return {k: v.detach().clone() for k, v in module.state_dict().items()}, history


def _worker(rank: int, world: int, port: int, out: str) -> None:
    os.environ.update(
        RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port)
    )
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    torch.set_num_threads(1)
    results = {}
    for kind in KINDS:
        state, history = _fit(kind, B, Path(out) / f"ck{rank}")
        results[kind] = {"state": {k: v.tolist() for k, v in state.items()}, "history": history}
    (Path(out) / f"rank{rank}.json").write_text(json.dumps(results))
    dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # two fresh interpreters import torch: ~15 s of CPU
def test_two_processes_match_one_with_the_doubled_batch(tmp_path):
    ctx = mp.start_processes(_worker, args=(2, _free_port(), str(tmp_path)), nprocs=2, join=False, start_method="spawn")
    deadline = time.monotonic() + 180
    while not ctx.join(timeout=1):
        if time.monotonic() > deadline:
            for p in ctx.processes:
                p.kill()
            pytest.fail("the two training processes did not finish in 180 s")
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert (tmp_path / "ck0" / "last.safetensors").is_file() and (tmp_path / "ck0" / "list.jsonl").is_file()
    assert not (tmp_path / "ck1").exists(), "rank 1 wrote files: only rank 0 writes checkpoints and logs"
    for kind in KINDS:
        one, one_history = _fit(kind, 2 * B)
        wrong, _ = _fit(kind, B)
        for r in ranks:
            got = {k: torch.tensor(v) for k, v in r[kind]["state"].items()}
            assert max(float((got[k] - one[k]).abs().max()) for k in one) <= 1e-5, kind
            assert max(float((got[k] - wrong[k]).abs().max()) for k in one) > 1e-3, kind
            for mine, want in zip(r[kind]["history"], one_history):  # metrics reduced over both processes
                assert mine["train_loss"] == pytest.approx(want["train_loss"], abs=1e-5)
                assert mine["train_accuracy"] == want["train_accuracy"]
        assert len(ranks[0][kind]["history"]) == EPOCHS
