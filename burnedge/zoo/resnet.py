"""torchvision's ResNet-18 and ResNet-50, with its state-dict names (`conv1.weight`, `fc.bias`,
`layer2.0.downsample.1.running_var`), so `torchvision.models.resnet18(weights=...).state_dict()` saved as
safetensors loads as it is.

The structure is torchvision's: a 7x7/2 stem conv, BN, ReLU, 3x3/2 max pool; four stages of BasicBlocks (18) or
Bottlenecks (50; the stride on the 3x3 conv, "ResNet v1.5") with a 1x1 conv + BN shortcut where the shape changes;
global average pool; fc. The class count comes from the checkpoint's `fc.weight`.
"""

from __future__ import annotations

import numpy as np

from .. import nn
from .registry import Architecture, Config, Input, Tensors, register
from .vision import check_image, classes

__all__ = ["BasicBlock", "Bottleneck", "ResNet"]


def _bn_conv(cin: int, cout: int, kernel: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, kernel, stride=stride, padding=kernel // 2, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin: int, planes: int, stride: int = 1, downsample: nn.Module | None = None) -> None:
        super().__init__()
        self.conv1 = _bn_conv(cin, planes, 3, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU()
        self.conv2 = _bn_conv(planes, planes, 3)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + (self.downsample(x) if self.downsample is not None else x))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin: int, planes: int, stride: int = 1, downsample: nn.Module | None = None) -> None:
        super().__init__()
        self.conv1 = _bn_conv(cin, planes, 1)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = _bn_conv(planes, planes, 3, stride)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = _bn_conv(planes, planes * 4, 1)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU()
        self.downsample = downsample

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return self.relu(y + (self.downsample(x) if self.downsample is not None else x))


class ResNet(nn.Module):
    def __init__(self, block: type, layers: list[int], num_classes: int = 1000) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        cin = 64
        for i, (planes, blocks) in enumerate(zip((64, 128, 256, 512), layers)):
            stride = 1 if i == 0 else 2
            downsample = None
            if stride != 1 or cin != planes * block.expansion:
                downsample = nn.Sequential(
                    _bn_conv(cin, planes * block.expansion, 1, stride), nn.BatchNorm2d(planes * block.expansion)
                )
            stage = [block(cin, planes, stride, downsample)]
            cin = planes * block.expansion
            stage += [block(cin, planes) for _ in range(1, blocks)]
            setattr(self, f"layer{i + 1}", nn.Sequential(*stage))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(self.avgpool(x).flatten(1))


def _entry(name: str, block: type, layers: list[int]) -> Architecture:
    def build(config: Config, tensors: Tensors, options: dict) -> nn.Module:
        return ResNet(block, layers, classes(tensors, "fc.weight"))

    return Architecture(
        name=name,
        summary=f"torchvision {name} (ImageNet classifier)",
        checkpoint=f"torchvision.models.{name}().state_dict() as safetensors (its exact keys)",
        build=build,
        inputs=lambda config: (Input("x", np.float32, (1, 3, 224, 224)),),
        check=check_image(name, 3, 32),
    )


register(_entry("resnet18", BasicBlock, [2, 2, 2, 2]))
register(_entry("resnet50", Bottleneck, [3, 4, 6, 3]))
