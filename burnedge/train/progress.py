"""What a training run tells while it runs: the live state a dashboard reads, one plain line per epoch, and the
metrics file (JSONL or CSV) written after every epoch for plots.

The training loop calls a Reporter: `begin(epochs, steps)`, `step(...)` after each optimizer step (cheap: it
only stores numbers) and `epoch(record)` after each epoch; a record is one history entry:
``{"epoch": 3, "train_loss": ..., "valid_accuracy": ..., "lr": ..., "samples_per_s": ..., "epoch_s": ...,
"eta_s": ...}``.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from ..errors import BurnedgeError

__all__ = ["LiveState", "MetricsFile", "PlainLog", "Reporter", "fmt_duration", "plain_line"]


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def metric_names(record: Mapping[str, Any]) -> list[str]:
    """The metrics of a history record, train and valid alike: 'loss', 'accuracy' (in the order met)."""
    names: list[str] = []
    for key in record:
        for side in ("train_", "valid_"):
            if key.startswith(side) and key[len(side) :] not in names:
                names.append(key[len(side) :])
    return names


def _side(record: Mapping[str, Any], side: str) -> str:
    values = [f"{k[len(side) + 1 :]} {v:.4f}" for k, v in record.items() if k.startswith(side + "_")]
    return f"{side} " + " ".join(values) if values else ""


def plain_line(record: Mapping[str, Any], epochs: int) -> str:
    """One epoch as one line: train and valid metrics, throughput, time and what is left."""
    parts = [f"epoch {record['epoch']}/{epochs}", _side(record, "train"), _side(record, "valid")]
    parts += [f"{record.get('samples_per_s', 0):.0f} samples/s", f"{record.get('epoch_s', 0):.1f} s"]
    parts.append(f"ETA {fmt_duration(record.get('eta_s'))}")
    return "  ".join(p for p in parts if p)


class Reporter:
    """Does nothing; the reporters below override what they show."""

    def begin(self, epochs: int, steps: int | None, start_epoch: int = 0) -> None:
        pass

    def step(self, epoch: int, step: int, live: Mapping[str, float], samples_per_s: float, eta_s: float | None):
        pass

    def epoch(self, record: Mapping[str, Any]) -> None:
        pass

    def end(self) -> None:
        pass

    def stop_requested(self) -> bool:
        return False


class Reporters(Reporter):
    """Several reporters as one."""

    def __init__(self, reporters: Sequence[Reporter]):
        self.reporters = list(reporters)

    def begin(self, epochs: int, steps: int | None, start_epoch: int = 0) -> None:
        for r in self.reporters:
            r.begin(epochs, steps, start_epoch)

    def step(self, epoch: int, step: int, live: Mapping[str, float], samples_per_s: float, eta_s: float | None):
        for r in self.reporters:
            r.step(epoch, step, live, samples_per_s, eta_s)

    def epoch(self, record: Mapping[str, Any]) -> None:
        for r in self.reporters:
            r.epoch(record)

    def end(self) -> None:
        for r in self.reporters:
            r.end()

    def stop_requested(self) -> bool:
        return any(r.stop_requested() for r in self.reporters)


class PlainLog(Reporter):
    """One line per epoch on `stream` (stdout), for logs and pipes."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream
        self.epochs = 0

    def begin(self, epochs: int, steps: int | None, start_epoch: int = 0) -> None:
        self.epochs = epochs

    def epoch(self, record: Mapping[str, Any]) -> None:
        stream = self.stream or sys.stdout
        print(plain_line(record, self.epochs), file=stream, flush=True)


class MetricsFile(Reporter):
    """The history, one row per epoch, in `path`: JSON lines (.jsonl) or CSV (.csv). Each row is written whole
    and flushed; a fresh run starts the file anew, a resumed one appends (CSV: the header once)."""

    def __init__(self, path: str | os.PathLike[str], append: bool = False):
        self.path = Path(path)
        self.kind = self.path.suffix.lower()
        if self.kind not in (".jsonl", ".csv"):
            raise BurnedgeError(f"log_file {self.path}: expected a .jsonl or .csv file, not {self.kind or 'no suffix'}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.columns: list[str] | None = None
        if append and self.kind == ".csv" and self.path.is_file():
            with open(self.path, newline="") as f:
                self.columns = next(csv.reader(f), None)
        if not append:
            self.path.write_text("")

    def epoch(self, record: Mapping[str, Any]) -> None:
        if self.kind == ".jsonl":
            line = json.dumps(dict(record)) + "\n"
        else:
            buf = io.StringIO()
            writer = csv.writer(buf, lineterminator="\n")
            if self.columns is None:
                self.columns = list(record)
                writer.writerow(self.columns)
            writer.writerow(["" if record.get(c) is None else record.get(c) for c in self.columns])
            line = buf.getvalue()
        with open(self.path, "a") as f:
            f.write(line)
            f.flush()


class LiveState(Reporter):
    """The numbers a dashboard shows, updated by the training thread and read by the UI thread under one lock.

    The UI reads `snapshot()` a few times a second; the training loop only stores numbers (no drawing). `stop()`
    asks the loop to end after the current step (the dashboard's q)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.epochs, self.steps, self.epoch_no, self.step_no = 0, None, 0, 0
        self.live: dict[str, float] = {}
        self.samples_per_s, self.eta_s = 0.0, None
        self.history: list[dict[str, Any]] = []
        self.done = False

    def begin(self, epochs: int, steps: int | None, start_epoch: int = 0) -> None:
        with self._lock:
            self.epochs, self.steps, self.epoch_no = epochs, steps, start_epoch + 1

    def step(self, epoch: int, step: int, live: Mapping[str, float], samples_per_s: float, eta_s: float | None):
        with self._lock:
            self.epoch_no, self.step_no, self.live = epoch, step, dict(live)
            self.samples_per_s, self.eta_s = samples_per_s, eta_s

    def epoch(self, record: Mapping[str, Any]) -> None:
        with self._lock:
            self.history.append(dict(record))
            self.eta_s = record.get("eta_s")

    def end(self) -> None:
        with self._lock:
            self.done = True

    def stop(self) -> None:
        self._stop.set()

    def stop_requested(self) -> bool:
        return self._stop.is_set()

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "epochs": self.epochs,
                "steps": self.steps,
                "epoch": self.epoch_no,
                "step": self.step_no,
                "live": dict(self.live),
                "samples_per_s": self.samples_per_s,
                "eta_s": self.eta_s,
                "history": list(self.history),
                "done": self.done,
            }
