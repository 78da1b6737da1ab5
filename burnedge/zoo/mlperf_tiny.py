"""The four MLPerf Tiny networks of the model suite (tests/models/*/gen.py), with the PyTorch names those scripts
give them, so the state dict of the PyTorch model saved as safetensors loads as it is:

- ds_cnn: keyword spotting, 1x1x49x10 MFCC -> 12 classes (`layers.N`: conv 10x4/2, four depthwise-separable blocks);
- mobilenet_v1_025: visual wake words, 1x3x96x96 -> 2 classes (`features.N`, `head.2`), width 0.25;
- resnet8: CIFAR-10, 1x3x32x32 -> 10 classes (`stem`, `stacks.N.conv1/bn1/conv2/bn2/shortcut`, `head.2`);
- fc_autoencoder: anomaly detection, 1x640 -> 1x640 (`layers.N`: 640-128x4-8-128x4-640 with BN).
The input is named `input`, the output `output`, as in the suite's ONNX files.
"""

from __future__ import annotations

import numpy as np

from .. import nn
from ..errors import ModelError
from .registry import Architecture, Config, Input, Tensors, register

__all__ = ["DSCNN", "FCAutoencoder", "MobileNetV1", "ResNet8"]


def _bn_relu(channels: int) -> list[nn.Module]:
    return [nn.BatchNorm2d(channels), nn.ReLU()]


class DSCNN(nn.Module):
    def __init__(self, filters: int = 64, classes: int = 12) -> None:
        super().__init__()
        layers = [nn.Conv2d(1, filters, (10, 4), stride=2, padding=(5, 1)), *_bn_relu(filters), nn.Dropout(0.2)]
        for _ in range(4):
            layers += [nn.Conv2d(filters, filters, 3, padding=1, groups=filters), *_bn_relu(filters)]
            layers += [nn.Conv2d(filters, filters, 1), *_bn_relu(filters)]
        layers += [nn.Dropout(0.4), nn.AvgPool2d((25, 5)), nn.Flatten(), nn.Linear(filters, classes)]
        self.layers = nn.Sequential(*layers, nn.Softmax(dim=1))

    def forward(self, input):  # noqa: A002 - the suite's input name
        return self.layers(input)


_V1_BLOCKS = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), *[(512, 1)] * 5, (1024, 2), (1024, 1)]


def _conv_bn_relu(cin: int, cout: int, kernel: int, stride: int, groups: int = 1) -> list[nn.Module]:
    conv = nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False)
    return [conv, nn.BatchNorm2d(cout), nn.ReLU()]


class MobileNetV1(nn.Module):
    def __init__(self, alpha: float = 0.25, classes: int = 2) -> None:
        super().__init__()
        cin = int(32 * alpha)
        layers = _conv_bn_relu(3, cin, 3, 2)
        for channels, stride in _V1_BLOCKS:
            cout = int(channels * alpha)
            layers += _conv_bn_relu(cin, cin, 3, stride, groups=cin) + _conv_bn_relu(cin, cout, 1, 1)
            cin = cout
        self.features = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.AvgPool2d(3), nn.Flatten(), nn.Linear(cin, classes), nn.Softmax(dim=1))

    def forward(self, input):  # noqa: A002 - the suite's input name
        return self.head(self.features(input))


class _Stack(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.shortcut = nn.Conv2d(cin, cout, 1, stride) if stride != 1 else nn.Identity()

    def forward(self, x):
        y = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        return self.relu(y + self.shortcut(x))


class ResNet8(nn.Module):
    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.stacks = nn.Sequential(_Stack(16, 16, 1), _Stack(16, 32, 2), _Stack(32, 64, 2))
        self.head = nn.Sequential(nn.AvgPool2d(8), nn.Flatten(), nn.Linear(64, classes), nn.Softmax(dim=1))

    def forward(self, input):  # noqa: A002 - the suite's input name
        return self.head(self.stacks(self.stem(input)))


class FCAutoencoder(nn.Module):
    def __init__(self, features: int = 640, hidden: int = 128, bottleneck: int = 8) -> None:
        super().__init__()
        widths = [features] + [hidden] * 4 + [bottleneck] + [hidden] * 4
        layers: list[nn.Module] = []
        for cin, cout in zip(widths, widths[1:]):
            layers += [nn.Linear(cin, cout), nn.BatchNorm1d(cout), nn.ReLU()]
        self.layers = nn.Sequential(*layers, nn.Linear(hidden, features))

    def forward(self, input):  # noqa: A002 - the suite's input name
        return self.layers(input)


def _entry(name: str, cls: type, shape: tuple[int, ...], summary: str) -> Architecture:
    def build(config: Config, tensors: Tensors, options: dict) -> nn.Module:
        return cls()

    def check(config: Config, shapes, given: set[str]):
        if shapes["input"][1:] != shape[1:]:  # the pools and the flatten fix all but the batch
            given_shape = list(shapes["input"])
            raise ModelError(
                f"{name}: input 'input' has shape {given_shape}; only the batch may differ from {list(shape)}"
            )
        return shapes

    return Architecture(
        name=name,
        summary=f"MLPerf Tiny {summary}",
        checkpoint=f"the state dict of the PyTorch model of tests/models/{name}/gen.py, as safetensors",
        build=build,
        inputs=lambda config: (Input("input", np.float32, shape),),
        check=check,
    )


register(_entry("ds_cnn", DSCNN, (1, 1, 49, 10), "keyword spotting DS-CNN (49x10 MFCC, 12 classes)"))
register(_entry("mobilenet_v1_025", MobileNetV1, (1, 3, 96, 96), "visual wake words MobileNetV1 0.25 (2 classes)"))
register(_entry("resnet8", ResNet8, (1, 3, 32, 32), "CIFAR-10 ResNet-8 (10 classes)"))
register(_entry("fc_autoencoder", FCAutoencoder, (1, 640), "anomaly detection FC autoencoder (640 features)"))
