"""torchvision's MobileNetV2 (width 1.0), with its state-dict names (`features.0.0.weight`, `features.3.conv.1.1.bias`,
`classifier.1.weight`), so `torchvision.models.mobilenet_v2(weights=...).state_dict()` saved as safetensors loads.

features.0 is a 3x3/2 conv-BN-ReLU6 (32 channels); features.1..17 the inverted residual blocks of the table below
(each `conv`: an optional 1x1 expansion conv-BN-ReLU6, a 3x3 depthwise conv-BN-ReLU6, a 1x1 projection conv and BN;
the input added back where the stride is 1 and the widths agree); features.18 a 1x1 conv-BN-ReLU6 to 1280; then a
global average pool and classifier = (Dropout, Linear), the class count from the checkpoint.
"""

from __future__ import annotations

import numpy as np

from .. import nn
from .registry import Architecture, Config, Input, Tensors, register
from .vision import check_image, classes

__all__ = ["InvertedResidual", "MobileNetV2"]

# expansion t, output channels c, repeats n, first stride s (the paper's Table 2)
_SETTING = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


def conv_bn_relu6(cin: int, cout: int, kernel: int = 3, stride: int = 1, groups: int = 1) -> nn.Sequential:
    """torchvision's Conv2dNormActivation with ReLU6: children 0 (conv), 1 (BN), 2 (ReLU6)."""
    return nn.Sequential(
        nn.Conv2d(cin, cout, kernel, stride=stride, padding=(kernel - 1) // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU6(),
    )


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand_ratio: int) -> None:
        super().__init__()
        hidden = int(round(cin * expand_ratio))
        self.use_res_connect = stride == 1 and cin == cout
        layers = [conv_bn_relu6(cin, hidden, 1)] if expand_ratio != 1 else []
        layers += [
            conv_bn_relu6(hidden, hidden, 3, stride, groups=hidden),
            nn.Conv2d(hidden, cout, 1, bias=False),
            nn.BatchNorm2d(cout),
        ]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, num_classes: int = 1000, dropout: float = 0.2) -> None:
        super().__init__()
        cin, last = 32, 1280
        features: list[nn.Module] = [conv_bn_relu6(3, cin, stride=2)]
        for t, c, n, s in _SETTING:
            for i in range(n):
                features.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        features.append(conv_bn_relu6(cin, last, 1))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(dropout), nn.Linear(last, num_classes))

    def forward(self, x):
        x = nn.functional.adaptive_avg_pool2d(self.features(x), (1, 1))
        return self.classifier(x.flatten(1))


def _build(config: Config, tensors: Tensors, options: dict) -> nn.Module:
    return MobileNetV2(classes(tensors, "classifier.1.weight"))


register(
    Architecture(
        name="mobilenet_v2",
        summary="torchvision mobilenet_v2 (ImageNet classifier, width 1.0)",
        checkpoint="torchvision.models.mobilenet_v2().state_dict() as safetensors (its exact keys)",
        build=_build,
        inputs=lambda config: (Input("x", np.float32, (1, 3, 224, 224)),),
        check=check_image("mobilenet_v2", 3, 32),
    )
)
