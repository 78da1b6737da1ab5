"""Small PaddlePaddle CNN exported with paddle.onnx.export (-> paddle2onnx).

Run in an exporter venv (NOT the main environment):
    python -m venv /tmp/venv-paddle
    /tmp/venv-paddle/bin/pip install paddlepaddle==3.0.0 paddle2onnx==2.0.1
    /tmp/venv-paddle/bin/python tests/exported/gen/paddle_cnn.py
"""

import os
import tempfile

import numpy as np
import paddle
import paddle.nn as nn
import paddle2onnx
from _meta import out_path, write_meta

NAME = "paddle_cnn"
paddle.seed(0)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2D(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2D(8)
        self.conv2 = nn.Conv2D(8, 8, 3, padding=1, groups=8)  # depthwise
        self.bn2 = nn.BatchNorm2D(8)
        self.conv3 = nn.Conv2D(8, 16, 1)
        self.pool = nn.MaxPool2D(2, 2)
        self.avg = nn.AdaptiveAvgPool2D(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = nn.functional.relu(self.bn1(self.conv1(x)))
        x = nn.functional.hardswish(self.bn2(self.conv2(x)))
        x = self.pool(nn.functional.relu(self.conv3(x)))
        x = self.avg(x)
        x = paddle.flatten(x, 1)
        return nn.functional.softmax(self.fc(x), axis=-1)


net = Net()
rng = np.random.default_rng(2)
for bn in (net.bn1, net.bn2):
    bn._mean.set_value(rng.normal(0, 0.1, bn._mean.shape).astype("float32"))
    bn._variance.set_value(rng.uniform(0.5, 1.5, bn._variance.shape).astype("float32"))
    bn.weight.set_value(rng.uniform(0.5, 1.5, bn.weight.shape).astype("float32"))
    bn.bias.set_value(rng.normal(0, 0.1, bn.bias.shape).astype("float32"))
net.eval()

spec = [paddle.static.InputSpec(shape=[None, 3, 32, 32], dtype="float32", name="x")]
with tempfile.TemporaryDirectory() as td:
    prefix = os.path.join(td, NAME)
    paddle.onnx.export(net, prefix, input_spec=spec, opset_version=13)
    os.replace(prefix + ".onnx", out_path(f"{NAME}.onnx"))

write_meta(
    NAME,
    exporter="paddle2onnx",
    exporter_version=paddle2onnx.__version__,
    framework="paddlepaddle",
    framework_version=paddle.__version__,
    features=[
        "weights stored as Constant nodes (no initializers)",
        "Conv without bias + Reshape/Add bias",
        "Conv + BatchNormalization (paddle2onnx keeps BN unfolded)",
        "depthwise Conv",
        "HardSwish",
        "MaxPool",
        "GlobalAveragePool",
        "flatten as Shape/Slice/Concat/Reshape",
        "MatMul + Add",
        "Softmax",
        "opset bumped to 14 by paddle2onnx (HardSwish)",
        "dynamic batch dim (DynamicDimension.N dim_param)",
        "output named fetch_name_0, empty producer_name",
    ],
    input_shapes={"x": (1, 3, 32, 32)},
    generator_env="venv: paddlepaddle==3.0.0 paddle2onnx==2.0.1",
)
print("wrote", out_path(f"{NAME}.onnx"))
