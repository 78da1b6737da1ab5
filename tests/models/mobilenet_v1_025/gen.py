"""MLPerf Tiny visual wake words MobileNetV1 (alpha 0.25): 1x3x96x96 input, 2 classes."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import torch
from torch import nn

INPUT_SHAPE = (1, 3, 96, 96)

# (output channels at alpha 1.0, stride) of the 13 depthwise-separable blocks.
_BLOCKS = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)]
_BLOCKS += [(512, 1)] * 5 + [(1024, 2), (1024, 1)]


def _conv_bn_relu(cin: int, cout: int, kernel: int, stride: int, groups: int = 1) -> list[nn.Module]:
    conv = nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False)
    return [conv, nn.BatchNorm2d(cout), nn.ReLU()]


class MobileNetV1(nn.Module):
    """Stem conv, 13 depthwise-separable blocks, 3x3 average pool, FC, softmax."""

    def __init__(self, alpha: float = 0.25, classes: int = 2) -> None:
        super().__init__()
        cin = int(32 * alpha)
        layers = _conv_bn_relu(3, cin, 3, 2)
        for channels, stride in _BLOCKS:
            cout = int(channels * alpha)
            layers += _conv_bn_relu(cin, cin, 3, stride, groups=cin)
            layers += _conv_bn_relu(cin, cout, 1, 1)
            cin = cout
        self.features = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.AvgPool2d(3), nn.Flatten(), nn.Linear(cin, classes), nn.Softmax(dim=1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


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
        model = MobileNetV1()
        _randomize_batchnorm(model, batch=8, steps=2)
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
