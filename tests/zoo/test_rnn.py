"""burnedge.nn's LSTM, GRU, LSTMCell, GRUCell against torch.nn's: same parameter names, same outputs.

Each case builds the torch module (seeded), loads its state dict into the burnedge.nn module of the same
constructor arguments, traces it and compares every output with torch's on the numpy reference (one LSTM and one
GRU also on the C backend).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import burnedge
import burnedge.nn as nn
from burnedge.errors import TraceError

from .common import randn, run, state_of, worst

TOL = 1e-5


class Wrap(nn.Module):
    """A recurrent layer with its initial state as inputs and every result as a named output."""

    def __init__(self, rnn: nn.Module, lstm: bool) -> None:
        super().__init__()
        self.rnn, self.lstm = rnn, lstm

    def forward(self, x, h0, c0=None):
        if self.lstm:
            y, (h, c) = self.rnn(x, (h0, c0))
            return {"y": y, "h": h, "c": c}
        y, h = self.rnn(x, h0)
        return {"y": y, "h": h}


CASES = {
    "lstm": dict(input_size=5, hidden_size=7),
    "lstm-2layers-bi-batchfirst": dict(input_size=5, hidden_size=6, num_layers=2, bidirectional=True, batch_first=True),
    "lstm-nobias": dict(input_size=4, hidden_size=3, bias=False),
    "gru": dict(input_size=5, hidden_size=7),
    "gru-3layers-bi": dict(input_size=3, hidden_size=4, num_layers=3, bidirectional=True),
    "gru-batchfirst": dict(input_size=6, hidden_size=5, batch_first=True),
}


def _pair(case: str):
    kwargs = CASES[case]
    kind = case.split("-")[0]
    torch.manual_seed(0)
    ref = (torch.nn.LSTM if kind == "lstm" else torch.nn.GRU)(**kwargs).eval()
    ours = (nn.LSTM if kind == "lstm" else nn.GRU)(**kwargs)
    ours.load_state_dict(state_of(ref))
    return kind == "lstm", ref, ours


def _compare(case: str, backend: str, steps: int = 6, batch: int = 2) -> None:
    lstm, ref, ours = _pair(case)
    kw = CASES[case]
    x = randn(*((batch, steps) if kw.get("batch_first") else (steps, batch)), kw["input_size"])
    dirs = (2 if kw.get("bidirectional") else 1) * kw.get("num_layers", 1)
    h0, c0 = randn(dirs, batch, kw["hidden_size"], seed=1), randn(dirs, batch, kw["hidden_size"], seed=2)
    feeds = {"x": x, "h0": h0, **({"c0": c0} if lstm else {})}
    model = burnedge.trace(Wrap(ours, lstm), feeds)
    assert [n.op_type for n in model.graph.nodes].count("LSTM" if lstm else "GRU") == kw.get("num_layers", 1)
    with torch.no_grad():
        t = torch.from_numpy
        y, hidden = ref(t(x), (t(h0), t(c0)) if lstm else t(h0))
    expected = {"y": y, **({"h": hidden[0], "c": hidden[1]} if lstm else {"h": hidden})}
    got = run(model, feeds, backend)
    for name, want in expected.items():
        assert worst(got[name], want.numpy()) < TOL, name


@pytest.mark.parametrize("case", sorted(CASES))
def test_recurrent_layer_matches_torch(case):
    _compare(case, "numpy")


@pytest.mark.parametrize("case", ["lstm-2layers-bi-batchfirst", "gru-3layers-bi"])
def test_recurrent_layer_on_the_c_backend(case):
    _compare(case, "c", steps=5, batch=1)


class Output(nn.Module):
    """A recurrent layer called without an initial state (zeros, as in torch); its output sequence only."""

    def __init__(self, rnn: nn.Module) -> None:
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        return self.rnn(x)[0]


@pytest.mark.parametrize("case", ["lstm", "gru-batchfirst"])
def test_default_state_is_zeros(case):
    _, ref, ours = _pair(case)
    x = randn(3, 4, CASES[case]["input_size"])
    with torch.no_grad():
        want = ref(torch.from_numpy(x))[0].numpy()
    model = burnedge.trace(Output(ours), {"x": x})
    assert worst(run(model, {"x": x})["output"], want) < TOL


def test_parameter_names_are_torchs():
    for case in CASES:
        _, ref, ours = _pair(case)
        assert sorted(ours.state_dict()) == sorted(ref.state_dict()), case


@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell"])
def test_cell_matches_torch(kind):
    torch.manual_seed(0)
    ref = getattr(torch.nn, kind)(6, 5)
    ours = getattr(nn, kind)(6, 5)
    ours.load_state_dict(state_of(ref))
    assert sorted(ours.state_dict()) == sorted(ref.state_dict())
    x, h, c = randn(3, 6), randn(3, 5, seed=1), randn(3, 5, seed=2)

    class Step(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.cell = ours

        def forward(self, x, h, c=None):
            if kind == "LSTMCell":
                h2, c2 = self.cell(x, (h, c))
                return {"h_out": h2, "c_out": c2}
            return {"h_out": self.cell(x, h)}

    feeds = {"x": x, "h": h, "c": c} if kind == "LSTMCell" else {"x": x, "h": h}
    got = run(burnedge.trace(Step(), feeds), feeds)
    with torch.no_grad():
        t = torch.from_numpy
        want = ref(t(x), (t(h), t(c))) if kind == "LSTMCell" else (ref(t(x), t(h)),)
    for name, w in zip(("h_out", "c_out"), want):
        assert worst(got[name], w.numpy()) < TOL, name


def test_proj_size_is_refused():
    with pytest.raises(ValueError, match="proj_size"):
        nn.LSTM(4, 8, proj_size=2)


def test_gate_order_is_onnxs():
    """torch LSTM i,f,g,o -> ONNX i,o,f,c; torch GRU r,z,n -> ONNX z,r,h (blocks of rows)."""
    from burnedge.nn.rnn import torch_to_onnx_gates

    blocks = np.repeat(np.arange(4), 2)[:, None]
    assert torch_to_onnx_gates("LSTM", blocks)[:, 0].tolist() == [0, 0, 3, 3, 1, 1, 2, 2]
    assert torch_to_onnx_gates("GRU", blocks[:6])[:, 0].tolist() == [1, 1, 0, 0, 2, 2]


def test_unbatched_input():
    """A [T, I] input (no batch dim) gives [T, H] outputs and [layers, H] states, as in torch."""
    _, ref, ours = _pair("lstm")
    x = randn(4, CASES["lstm"]["input_size"])
    feeds = {"x": x, "h0": randn(1, 7, seed=1), "c0": randn(1, 7, seed=2)}
    got = run(burnedge.trace(Wrap(ours, True), feeds), feeds)
    with torch.no_grad():
        t = {k: torch.from_numpy(v) for k, v in feeds.items()}
        y, (h, c) = ref(t["x"], (t["h0"], t["c0"]))
    for name, want in (("y", y), ("h", h), ("c", c)):
        assert worst(got[name], want.numpy()) < TOL, name


def test_a_wrong_initial_state_names_the_layer():
    _, _, ours = _pair("gru-3layers-bi")
    with pytest.raises(TraceError, match=r"rnn \(GRU\): initial state has shape \[2, 1, 4\]; expected \[6, 1, 4\]"):
        burnedge.trace(Wrap(ours, False), {"x": (5, 1, 3), "h0": (2, 1, 4)})
