"""Audio-style recurrent classifier: 1x50x40 features, LSTM(64), GRU(32), FC to 12 classes."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import torch
from torch import nn

INPUT_SHAPE = (1, 50, 40)


class RecurrentKWS(nn.Module):
    """LSTM then GRU over time (batch first); the last step's state goes to a linear classifier."""

    def __init__(self, features: int = 40, classes: int = 12) -> None:
        super().__init__()
        self.lstm = nn.LSTM(features, 64, batch_first=True)
        self.gru = nn.GRU(64, 32, batch_first=True)
        self.fc = nn.Linear(32, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x, _ = self.lstm(x)
        x, _ = self.gru(x)
        return self.fc(x[:, -1])


def build(out_path: Path) -> None:
    """Write the model to out_path as ONNX (opset 17, native LSTM and GRU ops)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = RecurrentKWS().eval()
        example = torch.randn(INPUT_SHAPE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            (example,),
            str(out_path),
            dynamo=False,
            opset_version=17,
            input_names=["input"],
            output_names=["output"],
        )


if __name__ == "__main__":
    build(Path(sys.argv[1]))
