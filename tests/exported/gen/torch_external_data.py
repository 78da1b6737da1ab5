"""Small PyTorch MLP saved with external data (weights in a separate file beside the .onnx).

Exported with the TorchScript exporter, then re-saved with
onnx.save_model(save_as_external_data=True, all_tensors_to_one_file=True,
location="torch_external_data.onnx.data", size_threshold=1024): tensors >= 1 KiB go to
the .data file (with offset/length), the small ones (biases, shape constants) stay inline,
so the importer must handle both in one model.

Runs in the main environment:
    python tests/exported/gen/torch_external_data.py
"""

import io
import os

import onnx
import torch
import torch.nn as nn
from _meta import out_path, write_meta

NAME = "torch_external_data"
DATA = f"{NAME}.onnx.data"
torch.manual_seed(0)

net = nn.Sequential(
    nn.Linear(32, 64),
    nn.Tanh(),
    nn.Linear(64, 64),
    nn.ReLU(),
    nn.Linear(64, 8),
    nn.LogSoftmax(dim=-1),
).eval()

buf = io.BytesIO()
torch.onnx.export(
    net,
    (torch.randn(1, 32),),
    buf,
    dynamo=False,
    opset_version=17,
    input_names=["x"],
    output_names=["logp"],
    dynamic_axes={"x": {0: "N"}, "logp": {0: "N"}},
)
model = onnx.load_from_string(buf.getvalue())
if os.path.exists(out_path(DATA)):
    os.remove(out_path(DATA))  # onnx appends to an existing data file
onnx.save_model(
    model,
    out_path(f"{NAME}.onnx"),
    save_as_external_data=True,
    all_tensors_to_one_file=True,
    location=DATA,
    size_threshold=1024,
)
os.chmod(out_path(DATA), 0o644)
onnx.checker.check_model(out_path(f"{NAME}.onnx"))  # path-based check resolves external data

write_meta(
    NAME,
    exporter="torch.onnx.export (TorchScript, dynamo=False) + onnx.save_model(save_as_external_data=True)",
    exporter_version=torch.__version__,
    framework="pytorch",
    framework_version=torch.__version__,
    features=[
        "external data: large initializers in " + DATA + " (location/offset/length)",
        "mixed inline + external initializers",
        "Gemm",
        "Tanh",
        "Relu",
        "LogSoftmax",
        "dynamic batch N",
    ],
    input_shapes={"x": (3, 32)},
    external_data=[DATA],
    generator_env="main env: torch CPU + onnx",
)
print("wrote", out_path(f"{NAME}.onnx"), out_path(DATA))
