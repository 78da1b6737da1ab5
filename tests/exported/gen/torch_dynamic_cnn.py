"""PyTorch CNN with dynamic batch, height and width (TorchScript exporter, dynamic_axes).

The graph keeps the shape arithmetic that the TorchScript exporter emits for
``x.view(x.size(0), -1)`` and ``F.interpolate(scale_factor=2)`` (Shape, Gather, Unsqueeze,
Concat, Resize with computed sizes...). The user resolves the symbols at load time:
    burnedge.load(path, input_shapes={"x": (1, 3, 32, 32)})

Runs in the main environment:
    python tests/exported/gen/torch_dynamic_cnn.py
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from _meta import out_path, write_meta

NAME = "torch_dynamic_cnn"
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.down = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.head = nn.Conv2d(16, 16, 1)
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        s = F.relu(self.stem(x))
        d = F.relu(self.bn(self.down(s)))
        u = F.interpolate(d, scale_factor=2.0, mode="nearest")
        h = F.relu(self.head(torch.cat([s, u], dim=1)))
        h = F.adaptive_avg_pool2d(h, 1)
        h = h.view(h.size(0), -1)
        return torch.sigmoid(self.fc(h))


net = Net().eval()
with torch.no_grad():
    net.bn.running_mean.normal_(0, 0.1)
    net.bn.running_var.uniform_(0.5, 1.5)

torch.onnx.export(
    net,
    (torch.randn(2, 3, 32, 32),),
    out_path(f"{NAME}.onnx"),
    dynamo=False,
    opset_version=17,
    input_names=["x"],
    output_names=["y"],
    dynamic_axes={"x": {0: "batch", 2: "height", 3: "width"}, "y": {0: "batch"}},
)

write_meta(
    NAME,
    exporter="torch.onnx.export (TorchScript, dynamo=False, dynamic_axes)",
    exporter_version=torch.__version__,
    framework="pytorch",
    framework_version=torch.__version__,
    features=[
        "dynamic dims batch/height/width (dim_param)",
        "shape arithmetic: Shape/Gather/Unsqueeze/Concat/Reshape",
        "Resize (nearest, scale 2)",
        "Concat on channels",
        "GlobalAveragePool",
        "Gemm",
        "Sigmoid",
    ],
    input_shapes={"x": (1, 3, 32, 32)},
    generator_env="main env: torch CPU + onnx",
)
print("wrote", out_path(f"{NAME}.onnx"))
