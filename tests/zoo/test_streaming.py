"""Issue 13's streaming model: written in burnedge.nn with its state as inputs and outputs, loaded from the
safetensors file of the same model in torch, matching torch frame by frame on the C backend.

Per frame of 160 samples: reflect-pad 2 samples each side, Conv1d (1 -> 8 channels, kernel 5, stride 2) + ReLU,
the mean over time, an LSTMCell (8 -> 16) carrying (h, c) from frame to frame, and a sigmoid head. The two
definitions below are the same text but for the import: torch.nn / torch.nn.functional vs burnedge.nn /
burnedge.nn.functional.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as TF
from safetensors.torch import save_file

import burnedge
import burnedge.nn as nn
import burnedge.nn.functional as F

from .common import randn, worst

FRAME, HIDDEN, FRAMES = 160, 16, 8


class TorchStreamer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv1d(1, 8, kernel_size=5, stride=2)
        self.cell = torch.nn.LSTMCell(8, HIDDEN)
        self.head = torch.nn.Linear(HIDDEN, 1)

    def forward(self, frame, h, c):
        x = TF.pad(frame.unsqueeze(1), (2, 2), mode="reflect")
        x = TF.relu(self.conv(x)).mean(dim=-1)
        h, c = self.cell(x, (h, c))
        return {"speech": torch.sigmoid(self.head(h)), "h_out": h, "c_out": c}


class Streamer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv1d(1, 8, kernel_size=5, stride=2)
        self.cell = nn.LSTMCell(8, HIDDEN)
        self.head = nn.Linear(HIDDEN, 1)

    def forward(self, frame, h, c):
        x = F.pad(frame.unsqueeze(1), (2, 2), mode="reflect")
        x = F.relu(self.conv(x)).mean(dim=-1)
        h, c = self.cell(x, (h, c))
        return {"speech": self.head(h).sigmoid(), "h_out": h, "c_out": c}


def test_streaming_lstm_matches_torch_frame_by_frame_on_c(tmp_path):
    torch.manual_seed(0)
    ref = TorchStreamer().eval()
    save_file(ref.state_dict(), str(tmp_path / "streamer.safetensors"))

    ours = Streamer()
    ours.load_safetensors(tmp_path / "streamer.safetensors")
    model = burnedge.trace(ours, {"frame": (1, FRAME), "h": (1, HIDDEN), "c": (1, HIDDEN)})
    assert {i.name for i in model.inputs} == {"frame", "h", "c"}
    bundle = burnedge.export(model, tmp_path / "streamer.bedge", test_vectors=1)
    sess = burnedge.Session(bundle, backend="c")

    signal = randn(FRAMES * FRAME, seed=3) * np.sin(np.linspace(0, 9, FRAMES * FRAME, dtype=np.float32))
    h = c = np.zeros((1, HIDDEN), np.float32)
    th, tc = torch.zeros(1, HIDDEN), torch.zeros(1, HIDDEN)
    errors = []
    for k in range(FRAMES):
        frame = np.ascontiguousarray(signal[k * FRAME : (k + 1) * FRAME][None])
        got = sess.run({"frame": frame, "h": h, "c": c})
        with torch.no_grad():
            want = ref(torch.from_numpy(frame), th, tc)
        errors.append(max(worst(got[n], want[n].numpy()) for n in ("speech", "h_out", "c_out")))
        h, c, th, tc = got["h_out"], got["c_out"], want["h_out"], want["c_out"]  # each side feeds back its own
    print(f"streaming, {FRAMES} frames on the C backend: max error per frame {[f'{e:.1e}' for e in errors]}")
    assert max(errors) < 1e-5, errors
    assert np.abs(th.numpy()).max() > 0.05  # the state moved: the frames were not all alike
