"""The Learner: a torch module trained over data loaders with a loss, an optimizer and metrics.

One epoch, in order:
1. the module in train mode; this process's share of the training batches (all of them in one process);
2. per batch: forward (bf16 autocast when asked), loss, backward (DDP averages gradients over the processes),
   gradient clipping, optimizer step, LR schedule step; loss and metrics summed on the device (no sync);
3. a few times a second the running means go to the reporters (dashboard, nothing else reads them);
4. the sums reduced over the processes, validation (`evaluate`), the history record (metrics, lr, samples/s,
   epoch time, ETA), the reporters, a checkpoint and early stopping (rank 0 alone writes files).

The same code runs on the CPU, one GPU, or under torchrun on several (burnedge.train.distributed).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..errors import BurnedgeError
from . import checkpoint, distributed
from .dashboard import run_with_dashboard
from .data import batch_size, to_device
from .metrics import Fn, Sums, loss_fn, metric_fns
from .progress import LiveState, MetricsFile, PlainLog, Reporter, Reporters
from .qat import QATModule, evaluate_int8

__all__ = ["EarlyStopping", "Learner"]

REPORT_EVERY_S = 0.25  # the live metrics are read (a device sync) at most this often

OPTIMIZERS: dict[str, Callable[[Any, float], torch.optim.Optimizer]] = {
    "adamw": lambda params, lr: torch.optim.AdamW(params, lr=lr),
    "adam": lambda params, lr: torch.optim.Adam(params, lr=lr),
    "sgd": lambda params, lr: torch.optim.SGD(params, lr=lr, momentum=0.9),
}


@dataclass(frozen=True)
class EarlyStopping:
    """Stop when `monitor` (a history key, default valid_loss, or train_loss without validation) has not
    improved by more than `min_delta` for `patience` epochs; `mode` "min", "max" or "auto" (max for accuracy)."""

    patience: int
    monitor: str | None = None
    mode: str = "auto"
    min_delta: float = 0.0

    def better(self, key: str, value: float, best: float | None) -> bool:
        mode = self.mode if self.mode != "auto" else ("max" if "accuracy" in key else "min")
        if best is None:
            return True
        return value > best + self.min_delta if mode == "max" else value < best - self.min_delta


def _schedule(spec: Any, opt: torch.optim.Optimizer, lr: float, total: int | None):
    if spec is None:
        return None
    if callable(spec):
        return spec(opt)
    if spec not in ("cosine", "onecycle"):
        raise BurnedgeError(f"unknown schedule {spec!r}; known: cosine, onecycle (or pass a function of the optimizer)")
    if total is None:
        raise BurnedgeError(f"schedule {spec!r} needs the number of steps: give a loader with len()")
    if spec == "cosine":
        return torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(total, 1))
    return torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=max(total, 1))


class Learner:
    """Trains `module` (a torch.nn.Module: what `burnedge.train.to_torch` makes, or any other).

    `loss`: a LOSSES name or `fn(outputs, targets)`; `optimizer`: "adamw", "adam", "sgd" or `fn(params)`;
    `metrics`: METRICS names or functions (the loss is always reported); `precision` "fp32" or "bf16" (autocast
    to bfloat16, and TF32 for what stays float32 on CUDA: the tensor cores); `compile`: torch.compile the module;
    `schedule`: "cosine", "onecycle" or `fn(optimizer)`, stepped after every optimizer step; `early_stopping`: a
    patience in epochs or an EarlyStopping; `dashboard`: "auto" (the terminal UI on a terminal, else plain lines),
    "tui", "plain" or None; `log_file`: the history as .jsonl or .csv.
    """

    def __init__(
        self,
        module: torch.nn.Module,
        train_loader: Iterable[Any],
        valid_loader: Iterable[Any] | None = None,
        loss: str | Fn = "cross_entropy",
        optimizer: str | Callable[[Any], torch.optim.Optimizer] = "adamw",
        lr: float = 1e-3,
        metrics: Sequence[str | Fn] = ("accuracy",),
        device: str | torch.device | None = None,
        precision: str = "fp32",
        compile: bool = False,
        grad_clip: float | None = None,
        schedule: str | Callable[[torch.optim.Optimizer], Any] | None = None,
        checkpoint_dir: str | os.PathLike[str] | None = None,
        early_stopping: int | EarlyStopping | None = None,
        dashboard: str | None = "auto",
        log_file: str | os.PathLike[str] | None = None,
    ):
        if precision not in ("fp32", "bf16"):
            raise BurnedgeError(f"precision {precision!r}: expected 'fp32' or 'bf16'")
        if dashboard not in ("auto", "tui", "plain", None):
            raise BurnedgeError(f"dashboard {dashboard!r}: expected 'auto', 'tui', 'plain' or None")
        self.group, self.device = distributed.join(torch.device(device) if device is not None else None)
        self.module = module.to(self.device)
        self.model = distributed.wrap(self.module, self.group, self.device)
        self.forward = torch.compile(self.model) if compile else self.model
        self.train_loader, self.valid_loader = train_loader, valid_loader
        self.loss = loss_fn(loss, module)
        self.metrics = metric_fns(metrics)
        self.precision = precision
        if precision == "bf16" and self.device.type == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
        if callable(optimizer):
            self.optimizer = optimizer(self.module.parameters())
        elif optimizer in OPTIMIZERS:
            self.optimizer = OPTIMIZERS[optimizer](self.module.parameters(), lr)
        else:
            raise BurnedgeError(f"unknown optimizer {optimizer!r}; known: {', '.join(OPTIMIZERS)} (or a function)")
        self.lr, self.schedule_spec, self.scheduler = lr, schedule, None
        self.planned = 0  # the epochs the current fit() asks for (what a schedule is planned over)
        self.grad_clip = grad_clip
        self.checkpoint_dir = Path(checkpoint_dir) if checkpoint_dir is not None else None
        if isinstance(early_stopping, int):
            early_stopping = EarlyStopping(early_stopping)
        self.early_stopping = early_stopping
        self.dashboard, self.log_file = dashboard, log_file
        self.history: list[dict[str, Any]] = []
        self.best: float | None = None
        self.stale = 0  # epochs since the monitored value last improved

    # -- one step, one pass ---------------------------------------------------------------------------------------
    def _autocast(self) -> contextlib.AbstractContextManager:
        if self.precision == "bf16":
            return torch.autocast(self.device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def _outputs(self, model: Any, inputs: Any) -> Any:
        return model(**inputs) if isinstance(inputs, dict) else model(*inputs)

    def _measures(self, out: Any, targets: torch.Tensor, loss: torch.Tensor) -> dict[str, torch.Tensor]:
        first = out[0] if isinstance(out, tuple) else out
        with torch.no_grad():
            return {"loss": loss.detach(), **{k: fn(first.detach(), targets) for k, fn in self.metrics.items()}}

    def _train_step(self, inputs: Any, targets: torch.Tensor) -> dict[str, torch.Tensor]:
        with self._autocast():
            out = self._outputs(self.forward, inputs)
            first = out[0] if isinstance(out, tuple) else out
            loss = self.loss(first, targets)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(self.module.parameters(), self.grad_clip)
        self.optimizer.step()
        if self.scheduler is not None:
            self.scheduler.step()
        return self._measures(out, targets, loss)

    def evaluate(self, loader: Iterable[Any], int8: bool = False) -> dict[str, float]:
        """The loss and metrics over `loader` (eval mode, no gradients; under DDP each process takes its share and
        the sums are reduced, so every process gets the same numbers).

        `int8=True` (a module from `prepare_qat`): the accuracy of the int8 model it converts to, run by burnedge's
        integer reference over the whole loader, so the number is the exported bundle's: {"accuracy", "correct",
        "samples"}."""
        if int8:
            return self._evaluate_int8(loader)
        self.module.eval()
        sums = Sums(self.metrics, self.device)
        with torch.no_grad():
            for batch in distributed.shard(loader, self.group, 0):
                inputs, targets = to_device(batch, self.device)
                with self._autocast():
                    out = self._outputs(self.module, inputs)
                    first = out[0] if isinstance(out, tuple) else out
                    loss = self.loss(first, targets)
                sums.add(batch_size(inputs), self._measures(out, targets, loss))
        if self.group.world == 1 and sums.count == 0:
            raise BurnedgeError("evaluate: the loader gave no batches")
        return sums.means(self.group.sum(sums.packed()))

    def _evaluate_int8(self, loader: Iterable[Any]) -> dict[str, float]:
        if not isinstance(self.module, QATModule):
            raise BurnedgeError(f"evaluate(int8=True) needs a prepare_qat module, not {type(self.module).__name__}")
        xs, ys = [], []
        for inputs, targets in loader:
            xs.append(torch.as_tensor(inputs).detach().cpu().numpy())
            ys.append(torch.as_tensor(targets).detach().cpu().numpy().reshape(-1))
        if not xs:
            raise BurnedgeError("evaluate: the loader gave no batches")
        x, y = np.concatenate(xs), np.concatenate(ys)
        correct = evaluate_int8(self.module, x, y)
        return {"accuracy": correct / len(y), "correct": float(correct), "samples": float(len(y))}

    def _epoch(self, epoch: int, steps: int | None, epochs: int, reporter: Reporter) -> tuple[dict[str, float], float]:
        """One pass over the training data; (the reduced means, samples per second)."""
        self.module.train()
        loader = self.train_loader
        if hasattr(loader, "set_epoch"):  # every process alike: under DDP the dealt-out batches stay disjoint
            loader.set_epoch(epoch)
        sums = Sums(self.metrics, self.device)
        start = last = time.perf_counter()
        seen = 0
        for step, batch in enumerate(distributed.shard(loader, self.group, epoch), 1):
            inputs, targets = to_device(batch, self.device)
            measures = self._train_step(inputs, targets)
            n = batch_size(inputs)
            sums.add(n, measures)
            seen += n
            now = time.perf_counter()
            if now - last >= REPORT_EVERY_S:
                last = now
                rate = seen * self.group.world / (now - start)
                reporter.step(epoch, step, sums.means(), rate, self._eta(epoch, epochs, step, steps, now - start))
            if self.group.world == 1 and reporter.stop_requested():
                break
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        elapsed = time.perf_counter() - start
        totals = self.group.sum(sums.packed())
        if totals[-1].item() == 0:
            raise BurnedgeError("fit: the training loader gave no batches")
        return sums.means(totals), totals[-1].item() / max(elapsed, 1e-9)

    def _eta(self, epoch: int, epochs: int, step: int, steps: int | None, elapsed: float) -> float | None:
        """Seconds left: this epoch's rest at its pace so far, then the epochs to come at the mean epoch time."""
        done = [r["epoch_s"] for r in self.history if "epoch_s" in r]
        per_epoch = sum(done) / len(done) if done else (elapsed / step * steps if steps else None)
        if per_epoch is None:
            return None
        rest = max(steps - step, 0) * elapsed / step if steps else 0.0
        return rest + (epochs - epoch) * per_epoch

    # -- the run --------------------------------------------------------------------------------------------------
    def _reporter(self, append: bool) -> tuple[Reporter, LiveState | None]:
        if not self.group.main:
            return Reporter(), None
        mode = self.dashboard
        if mode == "auto":
            terminal = sys.stdout.isatty() and sys.stdin.isatty()
            mode = "tui" if terminal and self.group.world == 1 else "plain"
        reporters: list[Reporter] = []
        live = LiveState() if mode == "tui" else None
        if live is not None:
            reporters.append(live)
        elif mode == "plain":
            reporters.append(PlainLog())
        if self.log_file is not None:
            reporters.append(MetricsFile(self.log_file, append=append))
        return Reporters(reporters), live

    def _resume(self) -> int:
        if self.checkpoint_dir is None:
            raise BurnedgeError("fit(resume=True) needs checkpoint_dir=, the folder the checkpoints went to")
        state = checkpoint.load(self.checkpoint_dir, self.module)
        planned = state.get("planned")
        if isinstance(self.schedule_spec, str) and planned is not None and planned != self.planned:
            raise BurnedgeError(
                f"resume: the {self.schedule_spec} schedule was planned for {planned} epochs; resume with "
                f"fit({planned}, resume=True), not fit({self.planned})"
            )
        self.optimizer.load_state_dict(state["optimizer"])
        if self.scheduler is not None and state.get("scheduler") is not None:
            self.scheduler.load_state_dict(state["scheduler"])
        self.history, self.best, self.stale = list(state["history"]), state["best"], state["stale"]
        return int(state["epoch"])

    def _monitor(self) -> str:
        es = self.early_stopping
        if es is not None and es.monitor is not None:
            return es.monitor
        return "valid_loss" if self.valid_loader is not None else "train_loss"

    def _after_epoch(self, record: dict[str, Any]) -> bool:
        """Checkpoint (rank 0) and early stopping; True to stop."""
        key = self._monitor()
        if key not in record:
            raise BurnedgeError(f"early stopping monitors {key!r}, which the history lacks; it has {sorted(record)}")
        rule = self.early_stopping or EarlyStopping(patience=0, monitor=key)
        improved = rule.better(key, record[key], self.best)
        if improved:
            self.best, self.stale = record[key], 0
        else:
            self.stale += 1
        if self.checkpoint_dir is not None and self.group.main:
            extra = {
                "epoch": record["epoch"],
                "planned": self.planned,
                "history": self.history,
                "best": self.best,
                "stale": self.stale,
                "optimizer": self.optimizer.state_dict(),
                "scheduler": self.scheduler.state_dict() if self.scheduler is not None else None,
            }
            checkpoint.save(self.checkpoint_dir, self.module, extra, best=improved)
        return self.early_stopping is not None and self.stale >= self.early_stopping.patience

    def _run(self, epochs: int, start: int, reporter: Reporter) -> None:
        steps = distributed.steps(self.train_loader, self.group)
        reporter.begin(epochs, steps, start)
        try:
            for epoch in range(start + 1, epochs + 1):
                t0 = time.perf_counter()
                train, rate = self._epoch(epoch, steps, epochs, reporter)
                record: dict[str, Any] = {"epoch": epoch, **{f"train_{k}": v for k, v in train.items()}}
                if self.valid_loader is not None:
                    record.update({f"valid_{k}": v for k, v in self.evaluate(self.valid_loader).items()})
                record["lr"] = self.optimizer.param_groups[0]["lr"]
                record["samples_per_s"], record["epoch_s"] = rate, time.perf_counter() - t0
                self.history.append(record)
                record["eta_s"] = self._eta(epoch, epochs, 1, 1, 0.0)
                stop = self._after_epoch(record)
                reporter.epoch(record)
                if self.group.any(stop or reporter.stop_requested(), self.device):
                    break
        finally:
            reporter.end()

    def fit(self, epochs: int, resume: bool = False) -> list[dict[str, Any]]:
        """Trains up to epoch `epochs` (counting the ones a resumed run already did); returns the history, one
        record per epoch. `resume` continues from checkpoint_dir's last checkpoint: weights, optimizer, schedule,
        history and random generators as they were, so the run goes on as if never stopped."""
        if epochs < 1:
            raise BurnedgeError(f"fit: epochs {epochs}: expected at least 1")
        self.planned = epochs
        if self.scheduler is None and self.schedule_spec is not None:
            steps = distributed.steps(self.train_loader, self.group)
            total = None if steps is None else steps * epochs
            self.scheduler = _schedule(self.schedule_spec, self.optimizer, self.lr, total)
        start = self._resume() if resume else len(self.history)
        reporter, live = self._reporter(append=resume)
        if start >= epochs:
            return self.history
        if live is None:
            self._run(epochs, start, reporter)
        else:
            run_with_dashboard(live, lambda: self._run(epochs, start, reporter))
        return self.history
