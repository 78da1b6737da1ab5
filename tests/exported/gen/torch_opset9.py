"""Opset-9-era model: PyTorch TorchScript exporter with opset_version=9 and
keep_initializers_as_inputs=True (the default behaviour of exporters of that era: every
weight is also listed in graph.input).

Exercises the old operator forms that were later changed: Upsample (deprecated in 10),
Clip with min/max *attributes* (Clip-6), Slice with starts/ends *attributes* (Slice-1),
Pad with pads *attribute* (Pad-2), Unsqueeze/ReduceMean with axes attributes,
Softmax-1 2-D coercion semantics, BatchNormalization-9.

Runs in the main environment:
    python tests/exported/gen/torch_opset9.py
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from _meta import out_path, write_meta

NAME = "torch_opset9"
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.fc = nn.Linear(4, 6)

    def forward(self, x):
        x = F.pad(x, (1, 1, 1, 1), mode="reflect")
        x = F.hardtanh(self.bn1(self.conv1(x)), 0.0, 6.0)  # Clip(min=0, max=6) attrs
        y = F.relu(self.conv2(x))
        y = F.interpolate(y, scale_factor=2.0, mode="nearest")  # Upsample-9
        x = torch.cat([x, y], dim=1)
        x = F.max_pool2d(x, 2)
        x = x[:, :4]  # Slice-1 attrs
        x = x.mean(dim=(2, 3))  # ReduceMean axes attr
        x = self.fc(x)
        return F.softmax(x, dim=1), x.unsqueeze(1)


net = Net().eval()
with torch.no_grad():
    net.bn1.running_mean.normal_(0, 0.1)
    net.bn1.running_var.uniform_(0.5, 1.5)
    net.bn1.weight.uniform_(0.5, 1.5)
    net.bn1.bias.normal_(0, 0.1)

torch.onnx.export(
    net,
    (torch.randn(1, 3, 16, 16),),
    out_path(f"{NAME}.onnx"),
    dynamo=False,
    opset_version=9,
    keep_initializers_as_inputs=True,
    do_constant_folding=False,
    input_names=["x"],
    output_names=["probs", "logits3d"],
)

write_meta(
    NAME,
    exporter="torch.onnx.export (TorchScript, dynamo=False, opset_version=9, keep_initializers_as_inputs=True)",
    exporter_version=torch.__version__,
    framework="pytorch",
    framework_version=torch.__version__,
    features=[
        "opset 9",
        "initializers also listed as graph inputs (must not be required feeds)",
        "Pad-2 (pads attr, reflect)",
        "BatchNormalization (unfolded, do_constant_folding=False)",
        "Clip-6 (min/max attrs)",
        "Upsample-9 (scales input)",
        "Concat",
        "MaxPool",
        "Slice-1 (starts/ends/axes attrs)",
        "ReduceMean axes attr",
        "Gemm",
        "Softmax-1",
        "Unsqueeze-1 axes attr",
        "two graph outputs",
    ],
    generator_env="main env: torch CPU + onnx",
)
print("wrote", out_path(f"{NAME}.onnx"))
