"""Tiny transformer encoder block with dynamic batch and sequence length, exported with
the torch.export-based exporter (torch.onnx.export(dynamo=True, dynamic_shapes=...)),
the default exporter since PyTorch 2.9.

Needs onnxscript, so it runs in a venv that sees the main torch but adds onnxscript:
    python -m venv --system-site-packages /tmp/venv-torch
    /tmp/venv-torch/bin/pip install onnxscript      # 0.7.2 was used
    /tmp/venv-torch/bin/python tests/exported/gen/torch_dynamic_seq.py
User resolves the symbols at load time: input_shapes={"x": (1, 8, 16)}.
"""

import onnxscript
import torch
import torch.nn as nn
from _meta import out_path, write_meta

NAME = "torch_dynamic_seq"
torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, d_in=16, d=24, heads=4, n_out=4):
        super().__init__()
        self.inp = nn.Linear(d_in, d)
        self.att = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln1 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.ln2 = nn.LayerNorm(d)
        self.out = nn.Linear(d, n_out)

    def forward(self, x):
        h = self.inp(x)
        a, _ = self.att(h, h, h, need_weights=False)
        h = self.ln1(h + a)
        h = self.ln2(h + self.ff(h))
        return self.out(h).softmax(-1)


net = Block().eval()
batch = torch.export.Dim("batch", min=1, max=64)
seq = torch.export.Dim("seq", min=2, max=512)
prog = torch.onnx.export(
    net,
    (torch.randn(2, 8, 16),),
    dynamo=True,
    opset_version=18,
    dynamic_shapes={"x": {0: batch, 1: seq}},
    optimize=True,
)
prog.save(out_path(f"{NAME}.onnx"))

write_meta(
    NAME,
    exporter="torch.onnx.export (dynamo=True, dynamic_shapes) + onnxscript " + onnxscript.__version__,
    exporter_version=torch.__version__,
    framework="pytorch",
    framework_version=torch.__version__,
    features=[
        "dynamic batch and sequence length (dim_param batch/seq)",
        "multi-head attention decomposed: MatMul/Reshape/Transpose/Softmax with Shape-derived reshape targets",
        "LayerNormalization op (opset 17+)",
        "Gelu via Erf",
        "Gemm",
        "metadata_props on values",
    ],
    input_shapes={"x": (1, 8, 16)},
    generator_env="venv --system-site-packages (main torch) + onnxscript==" + onnxscript.__version__,
)
print("wrote", out_path(f"{NAME}.onnx"))
