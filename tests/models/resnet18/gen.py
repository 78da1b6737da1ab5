"""ResNet-18 (basic blocks, [2, 2, 2, 2]): 1x3x224x224 input, 1000 classes."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import torch
from torch import nn

INPUT_SHAPE = (1, 3, 224, 224)


class _BasicBlock(nn.Module):
    """Two 3x3 conv+BN with a residual add; 1x1 conv+BN projection when shapes change."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.downsample: nn.Module = nn.Identity()
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + self.downsample(x))


class ResNet18(nn.Module):
    """7x7/2 stem, 3x3/2 max pool, four stages of two basic blocks, global pool, FC."""

    def __init__(self, classes: int = 1000) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 64, 7, 2, 3, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU(),
            nn.MaxPool2d(3, 2, 1),
        )
        stages: list[nn.Module] = []
        cin = 64
        for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
            stages += [_BasicBlock(cin, cout, stride), _BasicBlock(cout, cout, 1)]
            cin = cout
        self.stages = nn.Sequential(*stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.stages(self.stem(x)))
        return self.fc(torch.flatten(x, 1))


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
        model = ResNet18()
        _randomize_batchnorm(model, batch=4, steps=2)
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
