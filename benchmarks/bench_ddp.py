"""Data-parallel training measured: the training example's network (burnedge.examples.qat_digits: DigitsNet on
scikit-learn's digits, through burnedge.train's Learner) under torchrun with 1 process and with N, the same
global batch, then each run's final checkpoint exported to an int8 bundle and scored on the C backend.

    python benchmarks/bench_ddp.py --gpus 2                      # CUDA: 1 GPU against 2 (nccl, bf16 autocast)
    python benchmarks/bench_ddp.py --device cpu --gpus 2         # the CPU: 1 process against 2 (gloo, fp32)

Each run is `torchrun --standalone --nproc_per_node P` of this file (P = 1, then N), and every process:

1. trains DigitsNet in float with the Learner (DDP when P > 1; Adam, the example's rate) for --epochs passes over
   the training set repeated --repeat times (1,258 images alone leave a GPU launch-bound), global/P samples per
   process and step: the Learner deals out the batches, so global step k sees the same samples whatever P is;
2. rank 0 times the steps after --warmup (synchronizing CUDA before each clock read): samples/s of the group,
   epoch ends (reduction, checkpoint) included, as in a real run;
3. QAT as the example does it: `prepare_qat` from 256 training images, --qat-epochs at a tenth of the rate in
   fp32 (bf16 would round differently from the int8 conversion); rank 0 reports `Learner.evaluate(held-out,
   int8=True)`: the trainer's int8 count.

Both phases write checkpoints (float/, qat/). This script rebuilds the int8 model from those files alone (float
checkpoint into a `burnedge.nn` DigitsNet, traced, `prepare_qat` on the same calibration images, QAT checkpoint
loaded, `convert`, `burnedge.export`); `Session(bundle, backend="c")` scores the held-out images: the count must
equal the trainer's.

The table: processes, device, global and per-process batch, samples/s, scaling against 1 process, both int8
counts. The environment of every process started has NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and
NVSHMEM_DISABLE_NVLS=1 (NVLink multicast stays off on the lent GPU machines).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Set before torch is imported, and again in every process torchrun starts (this file, --worker): a program that
# builds its own environment must still not turn NVLink multicast on.
NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
os.environ.update(NO_MULTICAST)

import torch  # noqa: E402

from burnedge.examples.qat_digits import DigitsNet, data  # noqa: E402
from burnedge.nn import init  # noqa: E402
from burnedge.nn.trace import trace  # noqa: E402

INPUT = {"image": (1, 1, 8, 8)}  # the example's traced shape; the torch module takes any batch
CLASSES = 10


@dataclass
class Config:
    """What every process of one run needs (written as JSON beside the run's files)."""

    device: str  # "cuda" or "cpu"
    processes: int
    global_batch: int
    repeat: int
    epochs: int
    qat_epochs: int
    warmup: int
    lr: float
    calibration: int
    heldout: int  # held-out images scored (0: all 539)
    threads: int
    folder: str
    seed: int = 0  # the weights' and the shuffles' (the split is the example's, seed 0)


# -- the processes torchrun starts ----------------------------------------------------------------------------------


class DeviceBatches:
    """The training set resident on the device, cut into per-process batches of one pass.

    Every process builds the same sequence (the shuffle's seed is the pass number, counted here), and the
    Learner deals batch i to process i mod P: P consecutive batches are the samples of one 1-process step.
    Only whole global batches are given (equal steps everywhere). Batches are views: no copy per step."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor, per_process: int, processes: int, seed: int):
        self.x, self.y, self.per, self.processes, self.seed, self.passes = x, y, per_process, processes, seed, 0

    def __len__(self) -> int:
        return len(self.x) // (self.per * self.processes) * self.processes

    def __iter__(self):
        gen = torch.Generator().manual_seed(self.seed + self.passes)
        self.passes += 1
        order = torch.randperm(len(self.x), generator=gen).to(self.x.device)
        xs, ys = self.x[order], self.y[order]  # one gather per pass
        for i in range(len(self)):
            yield xs[i * self.per : (i + 1) * self.per], ys[i * self.per : (i + 1) * self.per]


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _timed_learner(**kwargs):
    """A Learner that clocks its own steps (it has no per-step hook; its epoch rate includes the warm-up) and
    counts what this process trained on: samples and a per-class histogram kept on the device (no sync)."""
    from burnedge.train import Learner

    class Timed(Learner):
        def __init__(self, warmup: int, total: int, **kw):
            super().__init__(**kw)
            self.warmup, self.total, self.done, self.samples = warmup, total, 0, 0
            self.t0 = self.t1 = None
            self.classes = torch.zeros(CLASSES, dtype=torch.int64, device=self.device)

        def _train_step(self, inputs, targets):
            if self.done == self.warmup:  # every step before this one has finished: the clock starts
                _sync(self.device)
                self.t0 = time.perf_counter()
            out = super()._train_step(inputs, targets)
            self.done += 1
            self.samples += int(targets.shape[0])
            # scatter_add, not bincount: bincount on CUDA reads the largest label back to the host (a sync per step)
            self.classes.scatter_add_(0, targets, torch.ones_like(targets))
            if self.done == self.total:
                _sync(self.device)
                self.t1 = time.perf_counter()
            return out

    return Timed(**kwargs)


def _device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()} ({os.cpu_count()} cores)"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()} ({os.cpu_count()} cores)"


def _split(c: Config) -> tuple[np.ndarray, ...]:
    """The example's split as the launching script saved it (scikit-learn is imported once, not per process);
    the held-out images cut to --heldout."""
    with np.load(Path(c.folder).parent / "digits.npz") as f:
        xtr, ytr, xte, yte = (f[k] for k in ("xtr", "ytr", "xte", "yte"))
    return (xtr, ytr, xte[: c.heldout], yte[: c.heldout]) if c.heldout else (xtr, ytr, xte, yte)


def worker(config_path: str) -> None:
    """One process of a run (started by torchrun): trains, times, QATs, reports (see the module docstring)."""
    from burnedge.train import Learner, from_torch, to_torch
    from burnedge.train.qat import prepare_qat

    os.environ.update(NO_MULTICAST)
    c = Config(**json.loads(Path(config_path).read_text()))
    folder = Path(c.folder)
    if c.device == "cpu":
        torch.set_num_threads(c.threads)
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # one machine: the loopback, whatever else it has
    rank, local = int(os.environ.get("RANK", "0")), int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device(f"cuda:{local}" if c.device == "cuda" else "cpu")
    init.manual_seed(c.seed)  # the same initial weights in every run and process (DDP also broadcasts rank 0's)
    xtr, ytr, xte, yte = _split(c)
    model = trace(DigitsNet(), INPUT, name="digits_qat")
    per = c.global_batch // c.processes
    x = torch.tensor(np.tile(xtr, (c.repeat, 1, 1, 1)), device=device)
    y = torch.tensor(np.tile(ytr, c.repeat), device=device)
    loader = DeviceBatches(x, y, per, c.processes, c.seed)
    steps = len(loader) // c.processes
    precision = "bf16" if c.device == "cuda" else "fp32"
    learner = _timed_learner(
        warmup=c.warmup, total=steps * c.epochs, module=to_torch(model), train_loader=loader, optimizer="adam",
        lr=c.lr, metrics=(), device=device, precision=precision, checkpoint_dir=folder / "float", dashboard=None,
    )  # fmt: skip
    learner.fit(c.epochs)
    timed = (learner.total - learner.warmup) * c.global_batch
    report = dict(rank=rank, world=learner.group.world, steps=learner.done, samples=learner.samples,
                  classes=learner.classes.cpu().tolist())  # fmt: skip
    net = learner.module.eval()
    trained = from_torch(net, model)
    if rank == 0:
        with torch.no_grad():
            logits = net(torch.tensor(xte, device=device)).float()
        report.update(
            samples_per_s=timed / (learner.t1 - learner.t0),
            timed_steps=learner.total - learner.warmup,
            timed_s=learner.t1 - learner.t0,
            float_correct=int((logits.argmax(1).cpu().numpy() == yte).sum()),
            device_name=_device_name(device),
            precision=precision,
            train_samples=len(x),
        )

    calibration = [{"image": xtr[i : i + 1]} for i in range(c.calibration)]
    qat = prepare_qat(trained, calibration, device=str(device))
    qlearner = Learner(
        qat, DeviceBatches(x, y, per, c.processes, c.seed + 1000), optimizer="adam", lr=c.lr / 10, metrics=(),
        device=device, precision="fp32", checkpoint_dir=folder / "qat", dashboard=None,
    )  # fmt: skip
    qlearner.fit(c.qat_epochs)
    if rank == 0:
        report["trainer_int8"] = int(qlearner.evaluate([(xte, yte)], int8=True)["correct"])
        report["heldout"] = len(yte)
    (folder / f"rank{rank}.json").write_text(json.dumps(report))
    if learner.group.world > 1:
        torch.distributed.destroy_process_group()


# -- this script: the runs, the bundles, the table ------------------------------------------------------------------


def c_bundle_count(folder: Path, config: Config) -> int:
    """The int8 model rebuilt from the run's two checkpoints alone, exported, run on the C backend: correct
    held-out images."""
    import burnedge
    from burnedge.nn.weights import read_safetensors
    from burnedge.train.qat import convert, prepare_qat

    xtr, _, xte, yte = _split(config)
    net = DigitsNet()
    net.load_safetensors(folder / "float" / "last.safetensors")
    model = trace(net, INPUT, name="digits_qat")
    qat = prepare_qat(model, [{"image": xtr[i : i + 1]} for i in range(config.calibration)])
    state = read_safetensors(folder / "qat" / "last.safetensors")
    qat.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(a)) for k, a in state.items()})
    int8 = convert(qat, model)
    path = burnedge.export(int8, folder / "digits_qat.bedge", target="host")
    sess = burnedge.Session(path, backend="c")
    name = int8.graph.outputs[0]
    return sum(int(np.asarray(sess.run({"image": img[None]})[name]).argmax() == lab) for img, lab in zip(xte, yte))


def launch(config: Config, timeout: float, quiet: bool = False) -> list[dict]:
    """One torchrun run of `config`; the reports of its processes, by rank."""
    folder = Path(config.folder)
    folder.mkdir(parents=True, exist_ok=True)
    cfg = folder / "config.json"
    cfg.write_text(json.dumps(asdict(config)))
    # torchrun is torch.distributed.run: run as a module of this interpreter, so the same torch and venv serve
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={config.processes}",
           str(Path(__file__).resolve()), "--worker", str(cfg)]  # fmt: skip
    env = {**os.environ, **NO_MULTICAST}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[1]), env.get("PYTHONPATH")]))
    if config.device == "cpu":
        env["OMP_NUM_THREADS"] = str(config.threads)  # else torchrun sets 1 and says so
    out = subprocess.run(cmd, env=env, timeout=timeout, capture_output=quiet, text=True)
    if out.returncode != 0:
        tail = (out.stdout or "")[-3000:] + (out.stderr or "")[-3000:] if quiet else "(its output is above)"
        raise RuntimeError(f"{' '.join(cmd)} failed with status {out.returncode}\n{tail}")
    return [json.loads((folder / f"rank{r}.json").read_text()) for r in range(config.processes)]


@dataclass
class Row:
    processes: int
    device: str
    global_batch: int
    per_process: int
    samples_per_s: float
    trainer_int8: int
    c_int8: int
    heldout: int
    ranks: list[dict]


def bench(gpus: int, device: str, global_batch: int, repeat: int, epochs: int, qat_epochs: int, warmup: int,
          lr: float = 1e-2, calibration: int = 256, heldout: int = 0, threads: int = 1, folder: Path | None = None,
          timeout: float = 1800, quiet: bool = False) -> list[Row]:  # fmt: skip
    """Runs 1 process and `gpus` processes (one run when gpus is 1), returns a Row per run. Bad settings are a
    ValueError saying the numbers."""
    split = data(0)
    check(gpus, device, global_batch, repeat, epochs, warmup, len(split[1]))
    root = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="bench-ddp-"))
    root.mkdir(parents=True, exist_ok=True)
    np.savez(root / "digits.npz", **dict(zip(("xtr", "ytr", "xte", "yte"), split)))
    rows = []
    for n in sorted({1, gpus}):
        config = Config(device, n, global_batch, repeat, epochs, qat_epochs, warmup, lr, calibration, heldout,
                        threads, str(root / f"p{n}"))  # fmt: skip
        ranks = launch(config, timeout, quiet)
        main = ranks[0]
        c = c_bundle_count(Path(config.folder), config)
        rows.append(Row(n, main["device_name"], global_batch, global_batch // n, main["samples_per_s"],
                        main["trainer_int8"], c, main["heldout"], ranks))  # fmt: skip
    return rows


def check(gpus: int, device: str, global_batch: int, repeat: int, epochs: int, warmup: int, images: int) -> None:
    if gpus < 1:
        raise ValueError(f"--gpus {gpus}: expected at least 1 process")
    if device not in ("cuda", "cpu"):
        raise ValueError(f"--device {device!r}: expected 'cuda' or 'cpu'")
    if device == "cuda":
        visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if gpus > visible:
            shown = os.environ.get("CUDA_VISIBLE_DEVICES")
            where = f" (CUDA_VISIBLE_DEVICES={shown})" if shown is not None else ""
            raise ValueError(f"--gpus {gpus}: this machine shows {visible} CUDA GPU(s){where}; "
                             f"ask for at most {visible}, or --device cpu for gloo processes")  # fmt: skip
    if global_batch % gpus:
        raise ValueError(f"--global-batch {global_batch} is not divisible by {gpus} processes "
                         f"({global_batch} / {gpus} = {global_batch / gpus:g}); each takes global / N")  # fmt: skip
    if repeat < 1 or epochs < 1:
        raise ValueError(f"--repeat {repeat}, --epochs {epochs}: expected at least 1 each")
    samples = images * repeat
    steps = samples // global_batch
    if steps < 1:
        raise ValueError(f"--global-batch {global_batch} is more than the {samples:,} training samples "
                         f"({images:,} x --repeat {repeat}): not one step per epoch")  # fmt: skip
    if not 0 <= warmup < steps * epochs:
        raise ValueError(f"--warmup {warmup}: the run has {steps} steps per epoch x {epochs} epochs = "
                         f"{steps * epochs} steps; warm up on fewer, leaving some to time")  # fmt: skip


def table(rows: list[Row]) -> str:
    base = rows[0].samples_per_s
    head = ("processes", "device", "global batch", "per-process batch", "samples/s", "scaling vs 1", "trainer int8",
            "C bundle int8")  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(
            f"| {r.processes} | {r.device} | {r.global_batch:,} | {r.per_process:,} | {r.samples_per_s:,.0f} | "
            f"{r.samples_per_s / base:.2f}x | {r.trainer_int8}/{r.heldout} ({r.trainer_int8 / r.heldout:.2%}) | "
            f"{r.c_int8}/{r.heldout} ({r.c_int8 / r.heldout:.2%}) |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    cuda = torch.cuda.is_available()
    p = argparse.ArgumentParser(prog="python benchmarks/bench_ddp.py", description=__doc__.splitlines()[0])
    p.add_argument("--gpus", type=int, default=2, help="processes of the second run (GPUs on CUDA); 1 first")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda" if cuda else "cpu")
    p.add_argument("--global-batch", type=int, help="samples per step over all processes (CUDA 65536, CPU 256)")
    p.add_argument("--repeat", type=int, help="copies of the 1,258 training images per epoch (CUDA 2048, CPU 4)")
    p.add_argument("--epochs", type=int, default=None, help="float epochs (CUDA 5, CPU 3)")
    p.add_argument("--qat-epochs", type=int, default=1, help="QAT epochs after the float ones (not timed)")
    p.add_argument("--warmup", type=int, default=None, help="steps left out of the timing (CUDA 10, CPU 2)")
    p.add_argument("--lr", type=float, default=1e-2, help="float Adam rate (QAT: a tenth), the example's")
    p.add_argument("--heldout", type=int, default=0, help="score the first N held-out images (default: all 539)")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads per process (--device cpu)")
    p.add_argument("--out", type=Path, help="folder for the runs' checkpoints and bundles (default: a temp one)")
    p.add_argument("--worker", help=argparse.SUPPRESS)  # a process torchrun started: the config file
    a = p.parse_args(argv)
    if a.worker:
        worker(a.worker)
        return 0
    import burnedge.train

    if not isinstance(burnedge.train.Learner, type):  # the train extra is missing: its one-line reason, no torchrun
        p.error(f"the Learner needs the train extra: {burnedge.train._MISSING}")
    on_gpu = a.device == "cuda"
    # CUDA: 2.6M samples (660 MB on each GPU), 39 steps of 65,536 per epoch: the tiny net computes, not launches
    gb = a.global_batch or (65536 if on_gpu else 256)
    repeat = a.repeat or (2048 if on_gpu else 4)
    epochs = a.epochs or (5 if on_gpu else 3)
    warmup = a.warmup if a.warmup is not None else (10 if on_gpu else 2)
    try:
        rows = bench(a.gpus, a.device, gb, repeat, epochs, a.qat_epochs, warmup, a.lr, heldout=a.heldout,
                     threads=a.threads, folder=a.out)  # fmt: skip
    except ValueError as exc:
        p.error(str(exc))
    samples = rows[0].ranks[0]["train_samples"]
    steps = samples // gb
    backend = "nccl" if on_gpu else "gloo"
    precision = "bf16 autocast + TF32" if on_gpu else "fp32"
    print()
    print(f"bench_ddp  {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC  torch {torch.__version__}"
          f"  {backend}  {precision}  on {rows[0].device}")  # fmt: skip
    print(
        f"data: the digits' {samples // repeat:,} training images x {repeat} copies = {samples:,} samples per epoch, "
        f"{steps} steps of {gb:,} per epoch, {epochs} float epochs; timed: steps after the first {warmup} "
        f"(rank 0); then {a.qat_epochs} QAT epoch(s), fp32; int8 scored on {rows[0].heldout} held-out images"
    )
    print()
    print(table(rows))
    floats = ", ".join(f"{r.processes} process{'es' * (r.processes > 1)} {r.ranks[0]['float_correct']}/{r.heldout}"
                       for r in rows)  # fmt: skip
    print(f"float before QAT (torch, rank 0): {floats}")
    agree = all(r.c_int8 == r.trainer_int8 for r in rows)
    print()
    print("C bundle == trainer's int8 count on every run:", "yes" if agree else "NO")
    if not on_gpu:  # the processes share this machine's cores: what gloo costs here, not how GPUs scale
        print(f"CPU: {a.gpus} gloo processes on {os.cpu_count()} cores, {a.threads} thread(s) each: not a GPU figure")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
