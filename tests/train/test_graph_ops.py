"""The GraphModule runs the kernels a torch.nn model runs (what its training speed rests on): no separate pad
before a padded conv, an average pool as torch's pool, Gemm as one linear, and under bf16 autocast no cast of
every result back to float32."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import burnedge
from burnedge import nn

torch = pytest.importorskip("torch", reason="burnedge.train needs the train extra")
from torch.profiler import profile  # noqa: E402

from burnedge.train import to_torch  # noqa: E402


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, (5, 3), stride=2, padding=(2, 1))  # stride 2: windows stop short of the end pad
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.AvgPool2d((3, 3))
        self.fc = nn.Linear(4 * 2 * 2, 3)

    def forward(self, x):
        return self.fc(self.pool(nn.functional.relu(self.bn(self.conv(x)))).flatten(1))


class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, (5, 3), stride=2, padding=(2, 1))
        self.bn = torch.nn.BatchNorm2d(4)
        self.pool = torch.nn.AvgPool2d((3, 3))
        self.fc = torch.nn.Linear(4 * 2 * 2, 3)

    def forward(self, x):
        return self.fc(self.pool(torch.relu(self.bn(self.conv(x)))).flatten(1))


KERNELS = ("convolution", "pad", "constant_pad_nd", "_to_copy", "mul", "addmm", "mm", "avg_pool2d", "slice")


def _kernels(module, x, bf16: bool) -> Counter:
    with profile() as prof:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            out = module(x)
        out.float().sum().backward()
    counts = Counter({e.key: e.count for e in prof.key_averages()})
    return Counter({k: counts[f"aten::{k}"] for k in KERNELS if counts[f"aten::{k}"]}), out


@pytest.mark.parametrize("bf16", [False, True])
def test_same_kernels_as_torch_nn(bf16):
    ours = to_torch(burnedge.trace(Net(), {"x": (2, 1, 12, 12)}))
    twin = TorchNet()
    twin.load_state_dict(ours.state_dict(), strict=False)
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((4, 1, 12, 12)).astype(np.float32))
    got, out = _kernels(ours, x, bf16)
    want, ref = _kernels(twin, x, bf16)
    assert got == want
    assert out.dtype == ref.dtype
    assert torch.allclose(out.float(), ref.float(), atol=2e-2 if bf16 else 1e-5)


@pytest.mark.slow  # dynamo's first trace: ~10 s of CPU
def test_torch_compile_sees_one_graph():
    """torch.compile traces the whole forward pass without a graph break (constants are read before it traces)."""
    import torch._dynamo

    module = to_torch(burnedge.trace(Net(), {"x": (2, 1, 12, 12)}))
    explained = torch._dynamo.explain(module)(torch.zeros(4, 1, 12, 12))
    assert explained.graph_break_count == 0, [b.reason for b in explained.break_reasons]
    assert explained.graph_count == 1
