"""MLPerf Tiny image classification ResNet-8 on CIFAR-10: 1x3x32x32 input, 10 classes."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import torch
from torch import nn

INPUT_SHAPE = (1, 3, 32, 32)


class _Stack(nn.Module):
    """Two 3x3 conv+BN with a residual add; a strided 1x1 conv shortcut when shapes change."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        # As in the reference model, the projection shortcut has no BN.
        self.shortcut = nn.Conv2d(cin, cout, 1, stride) if stride != 1 else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + self.shortcut(x))


class ResNet8(nn.Module):
    """Stem conv, stacks of 16/32/64 filters, 8x8 average pool, FC, softmax."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.stacks = nn.Sequential(_Stack(16, 16, 1), _Stack(16, 32, 2), _Stack(32, 64, 2))
        self.head = nn.Sequential(nn.AvgPool2d(8), nn.Flatten(), nn.Linear(64, classes), nn.Softmax(dim=1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.stacks(self.stem(x)))


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
        model = ResNet8()
        _randomize_batchnorm(model, batch=16, steps=2)
        example = torch.randn(INPUT_SHAPE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            (example,),
            str(out_path),
            dynamo=False,
            opset_version=17,
            training=torch.onnx.TrainingMode.PRESERVE,  # keeps BN out of the convs
            input_names=["input"],
            output_names=["output"],
        )


if __name__ == "__main__":
    build(Path(sys.argv[1]))
