"""The training dashboard under textual's pilot (arrow keys move through each metric's history, live numbers come
from the training thread, q stops), and plain lines when stdout is not a terminal."""

from __future__ import annotations

import asyncio
import re
import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="burnedge.train needs the train extra")
pytest.importorskip("textual", reason="the dashboard needs the train extra")
from burnedge.train import Learner  # noqa: E402
from burnedge.train.dashboard import TrainingApp  # noqa: E402
from burnedge.train.progress import LiveState  # noqa: E402

RECORDS = [
    {"epoch": 1, "train_loss": 1.25, "train_accuracy": 0.5, "valid_loss": 1.5, "valid_accuracy": 0.25},
    {"epoch": 2, "train_loss": 0.75, "train_accuracy": 0.625, "valid_loss": 1.0, "valid_accuracy": 0.5},
    {"epoch": 3, "train_loss": 0.5, "train_accuracy": 0.875, "valid_loss": 0.875, "valid_accuracy": 0.75},
]


def _state(records=RECORDS) -> LiveState:
    state = LiveState()
    state.begin(epochs=4, steps=10)
    for r in records:
        state.epoch({**r, "samples_per_s": 1000.0, "epoch_s": 1.0, "eta_s": 2.0})
    return state


def _text(app, widget: str) -> str:
    return str(app.query_one(widget).content)


def _row(app) -> str:
    """The highlighted history row: the one the cursor marks with '>'."""
    rows = [line for line in _text(app, "#history").splitlines() if line.startswith(">")]
    assert len(rows) == 1, _text(app, "#history")
    return rows[0]


def _run(test) -> None:
    async def main():
        app = TrainingApp(_state(), start=lambda: None)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            await test(app, pilot)

    asyncio.run(main())


def test_arrow_keys_move_through_each_metrics_history():
    async def test(app, pilot):
        assert app.selected() == ("loss", 2)
        assert _text(app, "#history").startswith("< loss >")
        assert _row(app).split() == [">", "3", "0.5000", "0.8750"]
        await pilot.press("up")
        assert _row(app).split() == [">", "2", "0.7500", "1.0000"]
        await pilot.press("up", "up", "up")  # stops at the oldest epoch
        assert _row(app).split() == [">", "1", "1.2500", "1.5000"]
        await pilot.press("right")
        assert _text(app, "#history").startswith("< accuracy >")
        assert _row(app).split() == [">", "1", "0.5000", "0.2500"]
        await pilot.press("down")
        assert _row(app).split() == [">", "2", "0.6250", "0.5000"]
        await pilot.press("right")  # wraps round to the first metric
        assert app.selected() == ("loss", 1)
        await pilot.press("left")
        assert app.selected() == ("accuracy", 1)
        assert app.query_one("#spark").data == [0.5, 0.625, 0.875]

    _run(test)


def test_live_numbers_come_from_the_training_thread_and_q_stops_it():
    async def test(app, pilot):
        state = app.state

        def train():  # what the Learner's loop does from its thread
            state.step(4, 7, {"loss": 0.375, "accuracy": 0.9}, 2345.0, 65.0)

        t = threading.Thread(target=train)
        t.start()
        t.join()
        await pilot.pause(3 * app.poll_s)
        status = _text(app, "#status")
        assert re.search(r"epoch 4/4  step 7/10  2,345 samples/s  ETA 0:01:05", status), status
        assert "train  loss 0.3750  accuracy 0.9000" in _text(app, "#live")
        assert "valid (epoch 3)  loss 0.8750  accuracy 0.7500" in _text(app, "#live")
        assert not state.stop_requested()
        await pilot.press("q")
        assert state.stop_requested()  # the training stops; the app waits for it to end
        state.end()
        await pilot.pause(3 * app.poll_s)
        assert "finished" in _text(app, "#status")
        await pilot.press("q")
        assert not app.is_running

    _run(test)


def test_not_a_terminal_gives_one_plain_line_per_epoch(capsys):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 4)).astype(np.float32), rng.integers(0, 2, 16)
    module = torch.nn.Linear(4, 2)
    Learner(module, [(x[:8], y[:8]), (x[8:], y[8:])], [(x, y)], dashboard="auto").fit(2)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    line = (
        r"epoch {}/2  train loss \d+\.\d{{4}} accuracy \d\.\d{{4}}  valid loss \d+\.\d{{4}} accuracy \d\.\d{{4}}  "
        r"\d+ samples/s  \d+\.\d s  ETA \d:\d\d:\d\d"
    )
    for i, text in enumerate(lines, 1):
        assert re.fullmatch(line.format(i), text), text
