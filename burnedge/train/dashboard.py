"""The training dashboard: a textual app with the live metrics, progress, throughput and ETA, and each metric's
history browsable with the arrow keys.

    epoch 3/10  step 120/400  1,234 samples/s  ETA 0:01:23
    [progress bar]
    train  loss 0.4123  accuracy 0.8750      valid (epoch 2)  loss 0.5012  accuracy 0.8125
    < accuracy >  (left/right: metric, up/down: epoch)
    epoch    train     valid
      1     0.5000    0.4800
    > 2     0.7500    0.8125
    [sparkline of the train values]

Threads: training runs in a worker thread and only stores numbers in a LiveState; the app reads a snapshot every
POLL_S seconds in its own (main) thread, so drawing never slows a step. q stops the training after the current
step (or quits once it is over); the app stays open when training ends so the history can still be browsed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, ProgressBar, Sparkline, Static

from .progress import LiveState, fmt_duration, metric_names, plain_line

__all__ = ["POLL_S", "TrainingApp", "run_with_dashboard"]

POLL_S = 0.25


class TrainingApp(App):
    """The dashboard over one LiveState. `metric` / `cursor` are what the arrow keys move: the metric shown and the
    epoch selected in its history (None: follow the newest)."""

    TITLE = "burnedge train"
    CSS = "#status { text-style: bold; } #history { height: auto; } Sparkline { height: 3; }"
    BINDINGS = [
        Binding("left", "metric(-1)", "metric"),
        Binding("right", "metric(1)", "metric"),
        Binding("up", "epoch(-1)", "older"),
        Binding("down", "epoch(1)", "newer"),
        Binding("q", "stop_or_quit", "stop / quit"),
    ]

    def __init__(self, state: LiveState, start: Callable[[], None] | None = None, poll_s: float = POLL_S):
        super().__init__()
        self.state, self.start, self.poll_s = state, start, poll_s
        self.metric = 0
        self.cursor: int | None = None
        self.snap: dict[str, Any] = state.snapshot()

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        yield ProgressBar(total=None, show_eta=False, id="progress")
        yield Static(id="live")
        yield Static(id="history")
        yield Sparkline([], id="spark")
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_view()
        self.set_interval(self.poll_s, self.refresh_view)
        if self.start is not None:
            self.start()

    # -- keys -----------------------------------------------------------------------------------------------------
    def names(self) -> list[str]:
        history = self.snap["history"]
        return metric_names(history[-1]) if history else list(self.snap["live"])

    def action_metric(self, delta: int) -> None:
        names = self.names()
        if names:
            self.metric = (self.metric + delta) % len(names)
        self.render_history()

    def action_epoch(self, delta: int) -> None:
        n = len(self.snap["history"])
        if n:
            at = n - 1 if self.cursor is None else self.cursor
            self.cursor = min(max(at + delta, 0), n - 1)
        self.render_history()

    def action_stop_or_quit(self) -> None:
        if self.snap["done"] or self.start is None:
            self.exit()
        else:
            self.state.stop()
            self.query_one("#status", Static).update("stopping after this step ...")

    # -- drawing --------------------------------------------------------------------------------------------------
    def selected(self) -> tuple[str | None, int | None]:
        """(the metric shown, the index of the epoch selected in the history)."""
        names, n = self.names(), len(self.snap["history"])
        name = names[self.metric % len(names)] if names else None
        return name, (None if not n else n - 1 if self.cursor is None else min(self.cursor, n - 1))

    def refresh_view(self) -> None:
        s = self.snap = self.state.snapshot()
        steps = s["steps"]
        step = f"  step {s['step']}/{steps}" if steps else f"  step {s['step']}"
        done = "  finished: q quits, arrows browse" if s["done"] else ""
        status = f"epoch {s['epoch']}/{s['epochs']}{step}  {s['samples_per_s']:,.0f} samples/s"
        self.query_one("#status", Static).update(f"{status}  ETA {fmt_duration(s['eta_s'])}{done}")
        bar = self.query_one("#progress", ProgressBar)
        if steps and s["epochs"]:
            bar.update(total=steps * s["epochs"], progress=(s["epoch"] - 1) * steps + s["step"])
        live = "train  " + "  ".join(f"{k} {v:.4f}" for k, v in s["live"].items())
        if s["history"]:
            last = s["history"][-1]
            valid = "  ".join(f"{k[6:]} {v:.4f}" for k, v in last.items() if k.startswith("valid_"))
            live += f"      valid (epoch {last['epoch']})  {valid}" if valid else ""
        self.query_one("#live", Static).update(live)
        self.render_history()

    def render_history(self) -> None:
        name, at = self.selected()
        if name is None:
            self.query_one("#history", Static).update("history: none yet")
            self.query_one("#spark", Sparkline).display = False
            return
        text = Text(f"< {name} >  (left/right: metric, up/down: epoch)\n", style="bold")
        text.append(f"{'epoch':>7}  {'train':>10}  {'valid':>10}\n")
        history = self.snap["history"]
        for i, r in enumerate(history):
            mark = ">" if i == at else " "
            row = f"{mark}{r['epoch']:>6}  {_cell(r, 'train_' + name)}  {_cell(r, 'valid_' + name)}\n"
            text.append(row, style="reverse" if i == at else "")
        self.query_one("#history", Static).update(text)
        values = [r[f"train_{name}"] for r in history if f"train_{name}" in r]
        spark = self.query_one("#spark", Sparkline)
        spark.data, spark.display = values, len(values) > 1  # a single value draws as a solid block


def _cell(record: dict[str, Any], key: str) -> str:
    value = record.get(key)
    return f"{value:>10.4f}" if isinstance(value, (int, float)) else f"{'-':>10}"


def run_with_dashboard(state: LiveState, work: Callable[[], None]) -> None:
    """Runs `work` (the training) in a thread under the dashboard; returns when both are over, then prints the
    history as plain lines (what stays on the terminal). An error in `work` is raised here."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            work()
        except BaseException as exc:  # handed to the caller's thread
            errors.append(exc)
            state.end()

    thread = threading.Thread(target=target, name="burnedge-train", daemon=True)
    app = TrainingApp(state, start=thread.start)
    app.run()
    if thread.ident is None:  # the app ended before it started the training (no terminal to draw on)
        target()
    elif thread.is_alive():  # the app was closed while training ran (ctrl+q): stop it and wait
        state.stop()
        thread.join()
    snap = state.snapshot()
    for record in snap["history"]:
        print(plain_line(record, snap["epochs"]))
    if errors:
        raise errors[0]
