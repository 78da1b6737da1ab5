"""MLPerf Tiny keyword spotting DS-CNN: 1x1x49x10 MFCC input, 12 keyword classes."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import torch
from torch import nn

INPUT_SHAPE = (1, 1, 49, 10)


def _bn_relu(channels: int) -> list[nn.Module]:
    return [nn.BatchNorm2d(channels), nn.ReLU()]


class DSCNN(nn.Module):
    """Conv 10x4/2, four depthwise-separable blocks, average pool, FC, softmax."""

    def __init__(self, filters: int = 64, classes: int = 12) -> None:
        super().__init__()
        # TF "same" padding here is asymmetric (4 rows above, 5 below); the
        # torch exporter turns an explicit Pad into an unfolded constant
        # subgraph, so pad 5 rows each side, which gives the same 25x5 map.
        layers: list[nn.Module] = [
            nn.Conv2d(1, filters, (10, 4), stride=2, padding=(5, 1)),
            *_bn_relu(filters),
            nn.Dropout(0.2),
        ]
        for _ in range(4):
            layers += [
                nn.Conv2d(filters, filters, 3, padding=1, groups=filters),
                *_bn_relu(filters),
                nn.Conv2d(filters, filters, 1),
                *_bn_relu(filters),
            ]
        layers += [
            nn.Dropout(0.4),
            nn.AvgPool2d((25, 5)),
            nn.Flatten(),
            nn.Linear(filters, classes),
            nn.Softmax(dim=1),
        ]
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
        model = DSCNN()
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
