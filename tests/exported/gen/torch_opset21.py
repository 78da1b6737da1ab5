"""Opset-21 model from the torch.export-based exporter (torch.onnx.export(dynamo=True,
opset_version=21)).  Includes ops whose newest versions differ from older ones:
GroupNormalization (-21: per-channel scale/bias), Pad/Reduce*/Resize/Split with inputs
instead of attributes, etc.

Needs onnxscript, so it runs in the venv with the main torch + onnxscript:
    /tmp/venv-torch/bin/python tests/exported/gen/torch_opset21.py
"""

import onnxscript
import torch
import torch.nn as nn
import torch.nn.functional as F
from _meta import out_path, write_meta

NAME = "torch_opset21"
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.gn = nn.GroupNorm(2, 8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, padding=0)
        self.conv3 = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        h = F.silu(self.gn(self.conv1(x)))
        d = F.relu(self.conv2(F.pad(h, (1, 0, 1, 0), mode="constant", value=0.25)))
        u = F.interpolate(d, scale_factor=2.0, mode="bilinear", align_corners=False)
        h = torch.cat([h, u], dim=1)
        a, b = torch.chunk(self.conv3(h), 2, dim=1)
        y = a * torch.sigmoid(b)  # GLU-style gate
        return y.amax(dim=(2, 3)), y.mean(dim=1, keepdim=True)


net = Net().eval()
with torch.no_grad():
    net.gn.weight.uniform_(0.5, 1.5)
    net.gn.bias.normal_(0, 0.1)

prog = torch.onnx.export(net, (torch.randn(1, 3, 16, 16),), dynamo=True, opset_version=21, optimize=True)
prog.save(out_path(f"{NAME}.onnx"))

write_meta(
    NAME,
    exporter="torch.onnx.export (dynamo=True, opset_version=21) + onnxscript " + onnxscript.__version__,
    exporter_version=torch.__version__,
    framework="pytorch",
    framework_version=torch.__version__,
    features=[
        "opset 21",
        "GroupNormalization-21 or its decomposition",
        "Sigmoid/Mul (SiLU, GLU gate)",
        "Pad-21 asymmetric constant (pads/value as inputs)",
        "Resize bilinear (half_pixel)",
        "Concat",
        "Split into 2 outputs",
        "ReduceMax/ReduceMean with axes input",
        "two graph outputs",
    ],
    generator_env="venv --system-site-packages (main torch) + onnxscript==" + onnxscript.__version__,
)
print("wrote", out_path(f"{NAME}.onnx"))
