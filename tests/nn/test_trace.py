"""burnedge.trace: how inputs, outputs, nodes and weights are named, what downstream stages make of the Model,
and the errors bad use gets (naming the module path)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import burnedge
import burnedge.nn as nn
import burnedge.nn.functional as F
from burnedge.exporter import export_int8

from .common import rand, run


class M(nn.Module):  # the zoo engineer's contract, verbatim
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return F.relu(self.fc(x))


def test_the_contract_example_traces_to_a_model():
    m = M()
    model = burnedge.trace(m, {"x": (1, 4)})
    assert isinstance(model, burnedge.Model) and model.producer == "burnedge.nn"
    assert model.inputs == [burnedge.TensorInfo("x", (1, 4), np.dtype(np.float32))]
    assert [(o.name, o.shape) for o in model.outputs] == [("output", (1, 2))]
    x = rand((1, 4))
    want = np.maximum(x @ m.fc.weight.data.T + m.fc.bias.data, 0)
    np.testing.assert_allclose(run(model, {"x": x})["output"], want, rtol=1e-6)


class Tied(nn.Module):
    """Weights named by their module paths, a shared weight, a root Parameter, a buffer, several outputs."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(7, 4)
        self.blocks = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])
        self.heads = nn.ModuleDict({"cls": nn.Linear(4, 7, bias=False)})
        self.heads["cls"].weight = self.embed.weight  # tied, as language models do
        self.scale = nn.Parameter(np.full(4, 0.5))
        self.register_buffer("offset", np.arange(4, dtype=np.float32))
        self.register_buffer("scratch", np.ones(4, np.float32), persistent=False)

    def forward(self, ids, mask=None):
        h = (self.embed(ids) * self.scale + self.offset) * self.scratch
        for block in self.blocks:
            h = F.silu(block(h)) + h
        return {"logits": self.heads["cls"](h), "hidden": h, "ids": ids}


def test_names_follow_pytorch_and_forward():
    m = Tied()
    assert list(m.state_dict()) == [
        "scale",
        "offset",
        "embed.weight",
        "blocks.0.weight",
        "blocks.0.bias",
        "blocks.1.weight",
        "blocks.1.bias",
        "heads.cls.weight",
    ]
    assert [n for n, _ in m.named_parameters()] == [
        "scale",
        "embed.weight",
        "blocks.0.weight",
        "blocks.0.bias",
        "blocks.1.weight",
        "blocks.1.bias",
    ]
    assert [n for n, _ in m.named_modules()] == ["", "embed", "blocks", "blocks.0", "blocks.1", "heads", "heads.cls"]
    assert m.scale.dtype == np.float32  # numpy's float64 default becomes torch's float32
    ids = np.array([[1, 2, 6]], np.int64)
    model = burnedge.trace(m, {"ids": ids})  # an array gives dtype and shape; `mask` keeps its default
    g = model.graph
    assert model.inputs == [burnedge.TensorInfo("ids", (1, 3), np.dtype(np.int64))]
    assert [o.name for o in model.outputs] == ["logits", "hidden", "ids"]
    consts = {n for n, v in g.values.items() if v.is_const}
    assert {"embed.weight", "blocks.0.weight", "blocks.1.bias", "scale", "offset", "scratch"} <= consts
    assert not any(n.startswith("heads.cls.weight") for n in consts)  # the tied weight is one initializer
    assert {"embed/Gather", "blocks.0/Gemm", "blocks.1/Gemm", "heads.cls/Gemm", "Sigmoid_1"} <= {
        n.name for n in g.nodes
    }
    out = run(model, {"ids": ids})
    np.testing.assert_array_equal(out["ids"], ids)
    h = m.embed.weight.data[ids] * 0.5 + np.arange(4)
    for lin in m.blocks:
        z = h @ lin.weight.data.T + lin.bias.data
        h = z / (1 + np.exp(-z)) + h
    np.testing.assert_allclose(out["hidden"], h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["logits"], h @ m.embed.weight.data.T, rtol=1e-5, atol=1e-5)


class Pair(nn.Module):
    def forward(self, a, b):
        return a + b, a, a


def test_tuple_outputs_inputs_and_repeats_are_named():
    model = burnedge.trace(Pair(), {"a": (2, 3), "b": (3,)})
    assert [o.name for o in model.outputs] == ["output_0", "output_1", "output_2"]
    a, b = rand((2, 3)), rand((3,), seed=1)
    out = run(model, {"a": a, "b": b})
    np.testing.assert_allclose(out["output_0"], a + b)
    np.testing.assert_array_equal(out["output_2"], a)
    single = burnedge.trace(nn.Sequential(nn.Linear(3, 3), nn.Tanh()), (4, 3))
    assert [i.name for i in single.inputs] == ["input"] and [o.name for o in single.outputs] == ["output"]


def test_trace_runs_in_eval_mode_and_restores_the_flags():
    m = nn.Sequential(nn.BatchNorm1d(3), nn.Dropout(0.5))
    m.running_mean = None  # an attribute of the Sequential, not the BatchNorm's buffer
    assert m.training and m[0].training
    model = burnedge.trace(m, (4, 3))
    assert m.training and m[0].training
    x = rand((4, 3))
    np.testing.assert_allclose(run(model, {"input": x})["output"], x / np.sqrt(1 + 1e-5), rtol=1e-6)
    m.eval()
    assert not m[1].training


def test_a_traced_model_exports_to_int8(tmp_path):
    """Downstream stages take a traced Model as they take an imported one: int8 quantization and a bundle."""
    m = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(64, 3))
    model = burnedge.trace(m, {"input": (1, 2, 4, 4)})
    rng = np.random.default_rng(0)
    cal = [{"input": rng.standard_normal((1, 2, 4, 4)).astype(np.float32)} for _ in range(4)]
    path, report = export_int8(model, tmp_path / "q.bedge", cal, progress=False)
    assert report.meets_target() and report.output_cosine > 0.99
    got = burnedge.Session(path).run(cal[0])["output"]
    want = run(model, cal[0])["output"]
    assert np.abs(got - want).max() < 0.05 * np.abs(want).max()


class Branchy(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return -x


class Reads(nn.Module):
    def __init__(self, what):
        super().__init__()
        self.what = what

    def forward(self, x):
        return self.what(x)


class Features(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(8, 8, 1), nn.Conv2d(16, 4, 3))

    def forward(self, x):
        return self.features(x)


class Stray(nn.Module):
    def forward(self, x):
        return x * nn.Parameter(np.ones(3))


@pytest.mark.parametrize(
    "module, inputs, message",
    [
        (Features(), (1, 3, 8, 8), r"^features\.3 \(Conv2d\): expected input with 16 channels, got 8$"),
        (
            Branchy(),
            (2,),
            r"^Branchy: bool\(tensor\) / `if tensor:` reads the values .*tracing cannot branch on values",
        ),
        (Reads(float), (1,), r"^Reads: float\(tensor\) reads the values.*cannot branch"),
        (Reads(lambda x: x.item()), (1,), r"item\(\) reads the values"),
        (Reads(lambda x: x.__setitem__(0, 1.0)), (2,), r"in-place assignment .* is not traced"),
        (Reads(lambda x: x[5]), (2, 3), r"^Reads: index 5 is out of bounds for dim 0 of size 2$"),
        (Reads(lambda x: x.reshape(4, -1)), (2, 3), r"cannot reshape \[2, 3\] \(6 elements\) to \[4, -1\]"),
        (Reads(lambda x: x + np.ones(4, np.float32)), (2, 3), r"^Reads: Add on inputs \[2, 3\], \[4\] failed"),
        (nn.Sequential(nn.Linear(4, 2)), (3, 5), r"^0 \(Linear\): expected input with 4 features .* \[3, 5\]$"),
        (nn.Sequential(nn.BatchNorm2d(4)), (1, 3, 2, 2), r"^0 \(BatchNorm2d\): expected input with 4 channels, got 3"),
        (Stray(), (3,), r"^Stray: a Parameter \[3\] that is not part of the traced module"),
        (Reads(lambda x: 3.0), (2,), r"Reads.forward returned float as output 'output'"),
        (Reads(lambda x: x.transpose(0, 2)), (2, 3), r"^Reads: dim 2 is out of range for a tensor of 2 dims$"),
        (Reads(lambda x: x[x > 0]), (2,), r"boolean mask indexing"),
        (Reads(lambda x: x.view(2, 1.5)), (2, 3), r"^Reads: sizes must be ints, got 1.5 in \[2, 1.5\]$"),
        (Reads(lambda x: x + "a"), (2, 3), r"^Reads: cannot use a str"),
        (Reads(lambda x: nn.cat([x, x[:, None]], 1)), (2, 3), r"^Reads: Concat on inputs \[2, 3\], \[2, 1, 3\]"),
        (nn.Sequential(nn.Conv1d(1, 1, 1, stride=0)), (1, 1, 3), r"^0 \(Conv1d\): stride must be an int or 1"),
        (Reads(lambda x: F.interpolate(x, scale_factor=2, mode="bicubic")), (1, 1, 2, 2), r"mode 'bicubic' is not"),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else None,
)
def test_bad_use_is_a_trace_error_naming_the_module(module, inputs, message):
    with pytest.raises(burnedge.TraceError, match=message):
        burnedge.trace(module, inputs)


def test_bad_inputs_are_named():
    with pytest.raises(burnedge.TraceError, match=r"Pair.forward has inputs \['a', 'b'\]: give a dict"):
        burnedge.trace(Pair(), (2, 3))
    with pytest.raises(burnedge.TraceError, match=r"has no input\(s\) \['c'\]; its inputs are \['a', 'b'\]"):
        burnedge.trace(Pair(), {"a": (2,), "b": (2,), "c": (2,)})
    with pytest.raises(burnedge.TraceError, match=r"needs input\(s\) \['b'\]"):
        burnedge.trace(Pair(), {"a": (2,)})
    with pytest.raises(burnedge.TraceError, match=r"input 'a': give a shape"):
        burnedge.trace(Pair(), {"a": "2x3", "b": (2,)})
    with pytest.raises(burnedge.TraceError, match="needs a burnedge.nn.Module"):
        burnedge.trace(lambda x: x, (2,))


def test_outside_a_trace_modules_say_how_they_run():
    with pytest.raises(burnedge.TraceError, match=r"run by tracing.*burnedge\.trace"):
        M()(np.ones((1, 4), np.float32))


def test_module_misuse_is_a_burnedge_error():
    class Early(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)

    with pytest.raises(burnedge.BurnedgeError, match=r"Early: call super\(\).__init__\(\) before assigning 'fc'"):
        Early()
    lin = nn.Linear(2, 2)
    with pytest.raises(burnedge.BurnedgeError, match="cannot assign a ndarray to parameter 'weight'"):
        lin.weight = np.zeros((2, 2))
    with pytest.raises(burnedge.BurnedgeError, match="padding_mode 'mirror' is not supported"):
        nn.Conv2d(2, 2, 3, padding_mode="mirror")


def test_containers_and_buffers_name_like_torch():
    def build(lib):
        class Net(lib.Module):
            def __init__(self):
                super().__init__()
                self.seq = lib.Sequential(lib.Linear(2, 3), lib.ReLU(), lib.Linear(3, 2))
                self.blocks = lib.ModuleList([lib.Linear(2, 2)])
                self.blocks.append(lib.LayerNorm(2))
                self.blocks.insert(0, lib.Identity())
                self.heads = lib.ModuleDict({"b": lib.Linear(2, 1)})
                self.heads["a"] = lib.BatchNorm1d(2)
                self.register_buffer("none", None)
                self.register_buffer("temp", lib_array(lib, [1.0, 2.0]), persistent=False)

        return Net()

    def lib_array(lib, v):
        return torch.tensor(v) if lib is torch.nn else np.array(v, np.float32)

    ours, theirs = build(nn), build(torch.nn)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert len(ours.seq[1:]) == 2 and isinstance(ours.seq[-1], nn.Linear) and list(ours.heads) == ["b", "a"]
    ours.temp = np.zeros(2)  # assigning to a buffer keeps it a buffer
    assert [n for n, _ in ours.named_buffers()][0] == "temp" and ours.temp.dtype == np.float32
    ours.extra = nn.Buffer(np.ones(3))
    assert "extra" in ours.state_dict()
