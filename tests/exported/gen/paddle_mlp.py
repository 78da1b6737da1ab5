"""Small PaddlePaddle MLP exported with paddle.onnx.export (-> paddle2onnx).

Run in an exporter venv (NOT the main environment):
    /tmp/venv-paddle/bin/python tests/exported/gen/paddle_mlp.py
(venv: paddlepaddle==3.0.0 paddle2onnx==2.0.1)
"""

import os
import tempfile

import paddle
import paddle.nn as nn
import paddle2onnx
from _meta import out_path, write_meta

NAME = "paddle_mlp"
paddle.seed(0)


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 64)
        self.ln = nn.LayerNorm(64)
        self.fc2 = nn.Linear(64, 32)
        self.fc3 = nn.Linear(32, 3)

    def forward(self, x):
        h = nn.functional.gelu(self.ln(self.fc1(x)))
        h = nn.functional.sigmoid(self.fc2(h)) * h[:, :32]
        return nn.functional.log_softmax(self.fc3(h), axis=-1)


net = MLP()
net.eval()
spec = [paddle.static.InputSpec(shape=[None, 20], dtype="float32", name="features")]
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
        "MatMul + Add",
        "LayerNormalization pattern",
        "Gelu (Erf pattern)",
        "Sigmoid",
        "Slice",
        "LogSoftmax",
        "dynamic batch dim",
    ],
    input_shapes={"features": (2, 20)},
    generator_env="venv: paddlepaddle==3.0.0 paddle2onnx==2.0.1",
)
print("wrote", out_path(f"{NAME}.onnx"))
