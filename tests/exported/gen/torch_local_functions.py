"""PyTorch model exported with ONNX local functions
(TorchScript exporter, export_modules_as_functions={ResBlock, SqueezeExcite}).

Each ResBlock / SqueezeExcite call site becomes a node whose op_type is a FunctionProto
in ModelProto.functions (domain "__main__"); ResBlock's function body itself calls the
SqueezeExcite function (nested functions). Weights are passed to the functions as extra
node inputs (BatchNorm is folded into the preceding Conv weights first); the functions
have no attributes.

Runs in the main environment:
    python tests/exported/gen/torch_local_functions.py
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from _meta import out_path, write_meta

NAME = "torch_local_functions"
torch.manual_seed(0)


class SqueezeExcite(nn.Module):
    def __init__(self, c, r=4):
        super().__init__()
        self.fc1 = nn.Conv2d(c, c // r, 1)
        self.fc2 = nn.Conv2d(c // r, c, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        s = torch.sigmoid(self.fc2(F.relu(self.fc1(s))))
        return x * s


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
        self.se = SqueezeExcite(c)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.se(self.conv2(h))
        return F.relu(h + x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.b1 = ResBlock(8)
        self.b2 = ResBlock(8)
        self.fc = nn.Linear(8, 6)

    def forward(self, x):
        x = self.b2(self.b1(F.relu(self.stem(x))))
        return self.fc(x.mean(dim=(2, 3)))


net = Net().eval()
with torch.no_grad():
    for b in (net.b1, net.b2):
        b.bn1.running_mean.normal_(0, 0.1)
        b.bn1.running_var.uniform_(0.5, 1.5)

torch.onnx.export(
    net,
    (torch.randn(1, 3, 16, 16),),
    out_path(f"{NAME}.onnx"),
    dynamo=False,
    opset_version=17,
    input_names=["x"],
    output_names=["logits"],
    export_modules_as_functions={ResBlock, SqueezeExcite},
)

write_meta(
    NAME,
    exporter="torch.onnx.export (TorchScript, dynamo=False, export_modules_as_functions)",
    exporter_version=torch.__version__,
    framework="pytorch",
    framework_version=torch.__version__,
    features=[
        "ONNX local functions (ModelProto.functions, custom domain)",
        "nested function calls",
        "weights passed into functions as node inputs",
        "function opset_import incl. its own domain",
        "GlobalAveragePool / ReduceMean",
        "Sigmoid gating Mul",
        "Gemm",
    ],
    generator_env="main env: torch CPU + onnx",
)
print("wrote", out_path(f"{NAME}.onnx"))
