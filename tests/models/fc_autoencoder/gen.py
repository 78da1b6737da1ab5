"""MLPerf Tiny anomaly detection FC autoencoder: 1x640 input, 128-unit layers, bottleneck 8."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import torch
from torch import nn

INPUT_SHAPE = (1, 640)


def _dense_bn_relu(cin: int, cout: int) -> list[nn.Module]:
    return [nn.Linear(cin, cout), nn.BatchNorm1d(cout), nn.ReLU()]


class FCAutoencoder(nn.Module):
    """Four 128-unit layers, an 8-unit bottleneck, four 128-unit layers, linear output."""

    def __init__(self, features: int = 640, hidden: int = 128, bottleneck: int = 8) -> None:
        super().__init__()
        widths = [features] + [hidden] * 4 + [bottleneck] + [hidden] * 4
        layers: list[nn.Module] = []
        for cin, cout in zip(widths, widths[1:]):
            layers += _dense_bn_relu(cin, cout)
        layers.append(nn.Linear(hidden, features))
        self.layers = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


def _randomize_batchnorm(model: nn.Module, batch: int, steps: int) -> None:
    """Give every BN random affine params and running stats measured on random data."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    with torch.no_grad():
        for bn in bns:
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.25, 0.25)
            bn.reset_running_stats()
            bn.momentum = None  # cumulative average over the calibration batches
        model.train()
        for _ in range(steps):
            model(torch.randn(batch, *INPUT_SHAPE[1:]))
        model.eval()
        for bn in bns:
            bn.momentum = 0.1


def build(out_path: Path) -> None:
    """Write the model to out_path as ONNX (opset 17, BatchNormalization kept)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = FCAutoencoder()
        _randomize_batchnorm(model, batch=64, steps=2)
        example = torch.randn(INPUT_SHAPE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            (example,),
            str(out_path),
            dynamo=False,
            opset_version=17,
            training=torch.onnx.TrainingMode.PRESERVE,  # keeps BN out of the Gemms
            input_names=["input"],
            output_names=["output"],
        )


if __name__ == "__main__":
    build(Path(sys.argv[1]))
