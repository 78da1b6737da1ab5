"""PyTorch CNN whose weights live in Constant nodes instead of initializers.

Exported with the TorchScript exporter (torch.onnx.export(dynamo=False)), then every
initializer is moved into a ``Constant`` node with onnx.helper, the way some
converters/optimizers emit models.  The Constant nodes use several attribute forms:
``value`` (TensorProto) for weight tensors, ``value_floats`` for 1-D float tensors
(biases) and ``value_float`` for the scalar buffer (the helper would also emit
``value_ints``/``value_int`` for int64 initializers, but this model has none: torch
already emits the Reshape shape as a Constant node with ``value``).

Runs in the main environment (torch CPU + onnx):
    python tests/exported/gen/torch_constant_weights.py
"""

import io

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from _meta import out_path, write_meta
from onnx import helper, numpy_helper

NAME = "torch_constant_weights"
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.fc = nn.Linear(16 * 4 * 4, 10)
        self.register_buffer("scale", torch.tensor(0.5))

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.max_pool2d(x, 2)
        x = F.leaky_relu(self.conv2(x), 0.1)
        x = F.avg_pool2d(x, 2)
        x = x.reshape(-1, 16 * 4 * 4)
        return self.fc(x) * self.scale


net = Net().eval()
with torch.no_grad():
    net.bn1.running_mean.normal_(0, 0.1)
    net.bn1.running_var.uniform_(0.5, 1.5)
    net.bn1.weight.uniform_(0.5, 1.5)
    net.bn1.bias.normal_(0, 0.1)

buf = io.BytesIO()
torch.onnx.export(
    net, (torch.randn(1, 3, 32, 32),), buf, dynamo=False, opset_version=13, input_names=["x"], output_names=["logits"]
)
model = onnx.load_from_string(buf.getvalue())


def constant_node(t: onnx.TensorProto) -> onnx.NodeProto:
    arr = numpy_helper.to_array(t)
    name = t.name
    if arr.ndim == 0 and arr.dtype == np.float32:
        return helper.make_node("Constant", [], [name], name=f"const_{name}", value_float=float(arr))
    if arr.ndim == 0 and arr.dtype == np.int64:
        return helper.make_node("Constant", [], [name], name=f"const_{name}", value_int=int(arr))
    if arr.ndim == 1 and arr.dtype == np.float32:
        return helper.make_node("Constant", [], [name], name=f"const_{name}", value_floats=arr.tolist())
    if arr.ndim == 1 and arr.dtype == np.int64:
        return helper.make_node("Constant", [], [name], name=f"const_{name}", value_ints=arr.tolist())
    return helper.make_node("Constant", [], [name], name=f"const_{name}", value=t)


g = model.graph
consts = [constant_node(t) for t in g.initializer]
init_names = {t.name for t in g.initializer}
del g.initializer[:]
# drop any graph inputs that were initializers (none with keep_initializers_as_inputs=False, but be safe)
keep_inputs = [i for i in g.input if i.name not in init_names]
del g.input[:]
g.input.extend(keep_inputs)
nodes = consts + list(g.node)
del g.node[:]
g.node.extend(nodes)
onnx.checker.check_model(model, full_check=True)
onnx.save(model, out_path(f"{NAME}.onnx"))

write_meta(
    NAME,
    exporter="torch.onnx.export (TorchScript, dynamo=False) + onnx.helper post-processing",
    exporter_version=torch.__version__,
    framework="pytorch",
    framework_version=torch.__version__,
    features=[
        "weights as Constant nodes (no initializers)",
        "Constant attribute forms: value (tensor), value_floats (biases), value_float (scalar buffer)",
        "Conv (BN folded)",
        "MaxPool",
        "LeakyRelu",
        "AveragePool",
        "Reshape",
        "Gemm",
        "Mul by scalar",
    ],
    generator_env="main env: torch CPU + onnx",
)
print("wrote", out_path(f"{NAME}.onnx"))
