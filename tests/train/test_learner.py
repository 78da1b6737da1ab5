"""burnedge.train.Learner: training, evaluation against torch's own numbers, checkpoints, exact resume, early
stopping, clipping, schedules and the errors for bad arguments."""

from __future__ import annotations

import json

import numpy as np
import pytest

import burnedge
from burnedge import nn

torch = pytest.importorskip("torch", reason="burnedge.train needs the train extra")
from burnedge.nn.weights import read_safetensors  # noqa: E402
from burnedge.train import ArrayLoader, EarlyStopping, Learner, to_torch  # noqa: E402


class Net(nn.Module):
    def __init__(self, softmax: bool = False):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        self.fc = nn.Linear(4 * 6 * 6, 3)
        self.softmax = softmax

    def forward(self, x):
        y = self.fc(self.features(x).flatten(1))
        return nn.functional.softmax(y, dim=1) if self.softmax else y


def _data(n: int = 48, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 1, 6, 6)).astype(np.float32)
    y = (x[:, 0, :3].mean((1, 2)) > 0).astype(np.int64) + (x[:, 0, 3:].mean((1, 2)) > 0.2)
    return x, y


def _module(softmax: bool = False):
    nn.init.manual_seed(0)
    return to_torch(burnedge.trace(Net(softmax), {"x": (2, 1, 6, 6)}))


def _loader(x, y, batch=16, shuffle=False):
    ds = torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    return torch.utils.data.DataLoader(ds, batch_size=batch, shuffle=shuffle)


def test_fit_learns_and_reports_what_torch_counts(tmp_path):
    x, y = _data()
    module = _module()
    learner = Learner(module, ArrayLoader(x, y, 16, shuffle=True), ArrayLoader(x, y, 20), lr=0.02, dashboard=None)
    history = learner.fit(4)
    assert [r["epoch"] for r in history] == [1, 2, 3, 4]
    assert history[-1]["train_loss"] < history[0]["train_loss"]
    for key in ("train_accuracy", "valid_loss", "valid_accuracy", "lr", "samples_per_s", "epoch_s", "eta_s"):
        assert key in history[-1], key
    assert history[-1]["samples_per_s"] > 0 and history[-1]["eta_s"] == 0
    module.eval()
    with torch.no_grad():
        out = module(torch.from_numpy(x))
    got = learner.evaluate(ArrayLoader(x, y, 20))
    want_loss = float(torch.nn.functional.cross_entropy(out, torch.from_numpy(y)))
    assert got["accuracy"] == float((out.argmax(1).numpy() == y).mean())
    assert abs(got["loss"] - want_loss) < 1e-6
    assert history[-1]["valid_loss"] == pytest.approx(want_loss, abs=1e-6)


def test_softmax_output_gets_the_log_of_its_probability():
    """A model ending in Softmax (the zoo's) trains on -log p[target], not on a softmax of probabilities."""
    x, y = _data(8)
    module = _module(softmax=True)
    learner = Learner(module, [(x, y)], dashboard=None)
    module.eval()
    with torch.no_grad():
        p = module(torch.from_numpy(x))
        logits = torch.log(p)  # softmax(log p) = p: the same distribution as logits
    got = learner.evaluate([(x, y)])["loss"]
    assert got == pytest.approx(float(torch.nn.functional.cross_entropy(logits, torch.from_numpy(y))), abs=1e-5)


class Killed(Exception):
    pass


class DiesAt:
    """A loader that dies (as a killed process would) when epoch `epoch` starts."""

    def __init__(self, loader, epoch):
        self.loader, self.epoch, self.started = loader, epoch, 0

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        self.started += 1
        if self.started == self.epoch:
            raise Killed
        return iter(self.loader)


def _run(tmp_path, epochs, resume=False, dies_at=None, **kw):
    x, y = _data()
    torch.manual_seed(0)
    module = _module()
    loader = _loader(x, y, shuffle=True)
    learner = Learner(
        module,
        loader if dies_at is None else DiesAt(loader, dies_at),
        _loader(x, y, batch=24),
        lr=0.01,
        schedule="onecycle",
        checkpoint_dir=tmp_path / "ck",
        dashboard=None,
        **kw,
    )
    return learner, learner.fit(epochs, resume=resume)


def test_resume_continues_exactly(tmp_path):
    straight, h_straight = _run(tmp_path / "a", 3)
    with pytest.raises(Killed):
        _run(tmp_path / "b", 3, dies_at=3)  # killed at the start of epoch 3: the checkpoint is epoch 2's
    resumed, h_resumed = _run(tmp_path / "b", 3, resume=True)
    assert len(h_resumed) == 3
    a, b = straight.module.state_dict(), resumed.module.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a), "resumed weights differ from the uninterrupted run's"
    assert h_resumed[-1]["train_loss"] == h_straight[-1]["train_loss"]
    assert h_resumed[-1]["lr"] == h_straight[-1]["lr"]
    saved = read_safetensors(tmp_path / "b" / "ck" / "last.safetensors")
    assert set(saved) == set(a) and "features.0.weight" in saved  # PyTorch's names
    assert np.array_equal(saved["fc.weight"], b["fc.weight"].numpy())


def test_resume_refuses_a_missing_checkpoint_and_another_plan(tmp_path):
    with pytest.raises(burnedge.WeightsError, match=r"last\.safetensors is missing"):
        _run(tmp_path, 2, resume=True)
    _run(tmp_path, 1)
    with pytest.raises(burnedge.BurnedgeError, match=r"planned for 1 epochs; resume with fit\(1, resume=True\)"):
        _run(tmp_path, 2, resume=True)


def test_early_stopping_stops_after_patience(tmp_path):
    x, y = _data(16)
    log = tmp_path / "m.jsonl"
    learner = Learner(
        _module(), [(x, y)], [(x, y)], optimizer="sgd", lr=0.0, early_stopping=EarlyStopping(2), log_file=log
    )
    learner.dashboard = None
    history = learner.fit(10)
    assert len(history) == 3  # epoch 1 is the best; 2 and 3 do not improve (lr 0): patience 2 is used up
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert rows == history


def test_grad_clip_bounds_the_step():
    x, y = _data(16)
    module = _module()
    before = [p.detach().clone() for p in module.parameters()]
    learner = Learner(module, [(x, y)], optimizer=lambda p: torch.optim.SGD(p, lr=1.0), grad_clip=1e-3)
    learner.dashboard = None
    learner.fit(1)
    moved = torch.sqrt(sum(((p.detach() - b) ** 2).sum() for p, b in zip(module.parameters(), before)))
    assert 0 < float(moved) <= 1e-3 * (1 + 1e-5)


def test_a_plain_torch_module_and_cosine_schedule():
    x, y = _data(32)
    module = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(36, 3))

    def top2(outputs, targets):
        return (outputs.topk(2, dim=1).indices == targets[:, None]).any(1).float().mean()

    learner = Learner(module, _loader(x, y, 8), lr=0.1, schedule="cosine", dashboard=None, metrics=("accuracy", top2))
    history = learner.fit(2)
    assert history[-1]["lr"] == pytest.approx(0.0, abs=1e-12)  # cosine to zero over 2 epochs x 4 steps
    assert history[0]["lr"] == pytest.approx(0.05, rel=1e-6)  # half way: 0.1 * (1 + cos(pi/2)) / 2
    assert history[0]["train_accuracy"] <= history[0]["train_top2"] <= 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"loss": "hinge"}, r"unknown loss 'hinge'; known: bce, cross_entropy"),
        ({"metrics": ("f1",)}, r"unknown metric 'f1'; known: accuracy"),
        ({"precision": "fp16"}, r"precision 'fp16'"),
        ({"optimizer": "lion"}, r"unknown optimizer 'lion'"),
        ({"dashboard": "web"}, r"dashboard 'web'"),
        ({"log_file": "m.txt"}, r"expected a \.jsonl or \.csv file"),
        ({"loss": "mse"}, r"mse: targets of shape \[8\] do not fit outputs of shape \[8, 3\]"),
    ],
)
def test_bad_arguments_are_one_line_errors(kwargs, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x, y = _data(8)
    with pytest.raises(burnedge.BurnedgeError, match=message):
        Learner(_module(), [(x, y)], **kwargs).fit(1)


def test_bad_schedule_and_resume_without_folder():
    x, y = _data(8)
    with pytest.raises(burnedge.BurnedgeError, match="unknown schedule 'step'"):
        Learner(_module(), [(x, y)], schedule="step", dashboard=None).fit(1)
    with pytest.raises(burnedge.BurnedgeError, match="needs checkpoint_dir"):
        Learner(_module(), [(x, y)], dashboard=None).fit(1, resume=True)
    with pytest.raises(burnedge.BurnedgeError, match="needs the number of steps"):
        Learner(_module(), iter([(x, y)]), schedule="cosine", dashboard=None).fit(1)


def test_int8_evaluation_needs_a_qat_module():
    x, y = _data(8)
    learner = Learner(_module(), [(x, y)], dashboard=None)
    with pytest.raises(burnedge.BurnedgeError, match="evaluate\\(int8=True\\) needs a prepare_qat module, not "):
        learner.evaluate([(x, y)], int8=True)
