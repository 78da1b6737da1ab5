"""Each burnedge.nn layer against torch.nn's: the same constructor arguments, the same state-dict keys and
shapes (loaded strictly from torch's state dict), the same outputs when traced and run (numpy; a subset on C)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import burnedge
import burnedge.nn as bnn

from .common import rand, randomize, run, torch_out

# (layer, args, kwargs, input shape[, "c"]); an int64 input has "int64" before its shape
LAYERS = [
    ("Linear", (6, 4), {}, (3, 6), "c"),
    ("Linear", (6, 4), {"bias": False}, (2, 5, 6)),
    ("Conv1d", (3, 4, 3), {}, (2, 3, 10)),
    ("Conv1d", (3, 4, 3), {"stride": 2, "padding": 1, "dilation": 2}, (2, 3, 11)),
    ("Conv1d", (3, 6, 4), {"padding": "same", "groups": 3}, (1, 3, 9), "c"),
    ("Conv1d", (3, 4, 3), {"padding": "valid", "bias": False}, (1, 3, 9)),
    ("Conv1d", (3, 4, 5), {"padding": 2, "padding_mode": "reflect"}, (1, 3, 9)),
    ("Conv1d", (3, 4, 3), {"padding": "same", "padding_mode": "replicate"}, (1, 3, 9)),
    ("Conv1d", (2, 3, 3), {}, (2, 7)),  # unbatched
    ("Conv1d", (2, 3, 3), {"padding": 2, "padding_mode": "circular"}, (1, 2, 7)),
    ("Conv2d", (3, 6, 3), {"padding": 1}, (2, 3, 8, 8)),
    ("Conv2d", (3, 4, (2, 4)), {"padding": "same", "dilation": (1, 2)}, (1, 3, 7, 9)),
    ("Conv2d", (4, 8, 3), {"stride": (2, 1), "groups": 2, "padding": (0, 1)}, (1, 4, 9, 7), "c"),
    ("Conv2d", (4, 4, 3), {"groups": 4, "padding": 1, "padding_mode": "reflect"}, (1, 4, 6, 6), "c"),
    ("Conv2d", (3, 2, 3), {"padding": (1, 2), "padding_mode": "replicate", "bias": False}, (1, 3, 5, 6)),
    ("Conv2d", (3, 2, 3), {"padding": "same", "padding_mode": "circular"}, (1, 3, 5, 6), "c"),
    ("ConvTranspose1d", (4, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}, (2, 4, 6), "c"),
    ("ConvTranspose1d", (4, 6, 3), {"groups": 2, "dilation": 2}, (1, 4, 5)),
    ("ConvTranspose2d", (4, 6, (3, 2)), {"stride": (2, 1), "padding": (1, 0), "output_padding": (1, 0)}, (1, 4, 5, 5)),
    ("ConvTranspose2d", (4, 2, 2), {"stride": 2, "groups": 2, "bias": False}, (2, 4, 3, 3), "c"),
    ("BatchNorm1d", (4,), {}, (3, 4)),
    ("BatchNorm1d", (4,), {"affine": False}, (3, 4, 5)),
    ("BatchNorm2d", (4,), {"eps": 1e-3}, (2, 4, 3, 3), "c"),
    ("BatchNorm2d", (4,), {"track_running_stats": False}, (3, 4, 3, 3)),
    ("LayerNorm", (5,), {}, (2, 3, 5)),
    ("LayerNorm", ((3, 5),), {"eps": 1e-3}, (2, 3, 5), "c"),
    ("LayerNorm", (5,), {"elementwise_affine": False}, (4, 5)),
    ("LayerNorm", (5,), {"bias": False}, (4, 5)),
    ("GroupNorm", (2, 4), {}, (2, 4, 3, 3), "c"),
    ("GroupNorm", (3, 6), {"affine": False, "eps": 1e-3}, (2, 6, 5)),
    ("Embedding", (10, 4), {}, ("int64", 2, 3)),
    ("Embedding", (10, 4), {"padding_idx": 0}, ("int64", 5), "c"),
    ("Dropout", (0.3,), {}, (2, 5)),
    ("Identity", (), {}, (2, 5)),
    ("Flatten", (), {}, (2, 3, 4, 5)),
    ("Flatten", (0, 1), {}, (2, 3, 4)),
    ("ReLU", (), {}, (2, 5)),
    ("ReLU6", (), {}, (2, 5)),
    ("LeakyReLU", (0.2,), {}, (2, 5)),
    ("GELU", (), {}, (2, 5), "c"),
    ("GELU", (), {"approximate": "tanh"}, (2, 5)),
    ("SiLU", (), {}, (2, 5)),
    ("Sigmoid", (), {}, (2, 5)),
    ("Tanh", (), {}, (2, 5)),
    ("Hardswish", (), {}, (2, 5), "c"),
    ("Hardsigmoid", (), {}, (2, 5)),
    ("Softmax", (), {"dim": 1}, (2, 5, 3)),
    ("Softmax", (-1,), {}, (2, 5)),
    ("MaxPool1d", (3, 2, 1), {}, (2, 3, 10)),
    ("MaxPool2d", (2,), {}, (1, 2, 6, 6)),
    ("MaxPool2d", (3, 2, 1), {"ceil_mode": True}, (1, 2, 8, 8), "c"),
    ("MaxPool2d", (2,), {"stride": 1, "dilation": 2}, (1, 2, 6, 6)),
    ("AvgPool1d", (3, 2, 1), {}, (2, 3, 10)),
    ("AvgPool2d", (2,), {}, (1, 2, 6, 6)),
    ("AvgPool2d", (3, 2, 1), {"count_include_pad": False}, (1, 2, 7, 7)),
    ("AvgPool2d", (3, 2), {"ceil_mode": True}, (1, 2, 8, 8)),
    ("AvgPool2d", (2,), {"divisor_override": 3}, (1, 2, 6, 6)),
    ("AvgPool2d", (3, 2, 1), {"ceil_mode": True}, (1, 2, 6, 6), "c"),
    ("AvgPool1d", (2, 2, 1), {"ceil_mode": True, "count_include_pad": False}, (1, 2, 6)),
    ("MaxPool1d", (2, 3, 1), {"ceil_mode": True}, (1, 2, 6)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 10), "c"),
    ("AdaptiveAvgPool1d", (5,), {}, (2, 3, 10)),
    ("AdaptiveAvgPool2d", ((3, 1),), {}, (1, 2, 7, 6)),
    ("AdaptiveAvgPool2d", (1,), {}, (2, 3, 5, 5)),
    ("AdaptiveAvgPool2d", ((None, 2),), {}, (1, 2, 4, 6)),
]

# the entries marked "c" run on the C backend too (one of each kernel family, in one model)
ON_C = [i for i, entry in enumerate(LAYERS) if entry[4:] == ("c",)]


def _input(shape: tuple) -> np.ndarray:
    if shape and shape[0] == "int64":
        return np.random.default_rng(1).integers(0, 10, shape[1:]).astype(np.int64)
    return rand(shape) * 2


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")
@pytest.mark.parametrize("i", [pytest.param(i, id=f"{c[0]}-{i}") for i, c in enumerate(LAYERS)])
def test_layer_matches_torch(i):
    name, args, kwargs, shape = LAYERS[i][:4]
    torch.manual_seed(i)
    tm = randomize(getattr(torch.nn, name)(*args, **kwargs), seed=i)
    bm = getattr(bnn, name)(*args, **kwargs)
    assert [(k, tuple(v.shape)) for k, v in tm.state_dict().items()] == [
        (k, v.shape) for k, v in bm.state_dict().items()
    ]
    bm.load_state_dict(tm.state_dict())
    x = _input(shape)
    want = torch_out(tm, x)
    model = burnedge.trace(bm, x)
    assert [i.name for i in model.inputs] == ["input"] and [o.name for o in model.outputs] == ["output"]
    got = run(model, {"input": x})["output"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


class _Side(bnn.Module):
    """Several layers side by side, one input and one output each (one C build for all of them)."""

    def __init__(self, layers):
        super().__init__()
        self.layers = bnn.ModuleList(layers)

    def forward(self, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15):
        xs = [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15]
        return [layer(x) for layer, x in zip(self.layers, xs)]


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")
def test_layers_on_the_c_backend():
    """One of each kernel family, traced into one model and run on the C backend, matches torch."""
    picked = ON_C
    assert len(picked) == 16  # _Side's inputs
    torch_layers, ours, feeds = [], [], {}
    for k, i in enumerate(picked):
        name, args, kwargs, shape = LAYERS[i][:4]
        torch.manual_seed(i)
        torch_layers.append(randomize(getattr(torch.nn, name)(*args, **kwargs), seed=i))
        ours.append(getattr(bnn, name)(*args, **kwargs))
        feeds[f"x{k}"] = _input(shape)
    side = _Side(ours)
    side.load_state_dict({f"layers.{k}.{n}": v for k, t in enumerate(torch_layers) for n, v in t.state_dict().items()})
    model = burnedge.trace(side, feeds)
    got = run(model, feeds, "c")
    for k, (tm, i) in enumerate(zip(torch_layers, picked)):
        want = torch_out(tm, feeds[f"x{k}"])
        np.testing.assert_allclose(got[f"output_{k}"], want, rtol=1e-5, atol=1e-5, err_msg=LAYERS[i][0])


def test_untrained_layers_are_initialised_like_torch():
    """Default weights follow torch's rules: U(+-1/sqrt(fan_in)) for Linear/Conv, ones and zeros for norms."""
    lin, conv, bn = bnn.Linear(16, 8), bnn.Conv2d(4, 6, 3, groups=2), bnn.BatchNorm2d(3)
    assert 0 < np.abs(lin.weight.data).max() <= 1 / 4 and lin.weight.data.std() > 0.05
    assert np.abs(conv.weight.data).max() <= 1 / np.sqrt(2 * 9)
    assert (bn.weight.data == 1).all() and (bn.running_var.data == 1).all() and bn.num_batches_tracked.data == 0
    assert bn.num_batches_tracked.data.dtype == np.int64


def test_embedding_from_pretrained_holds_the_given_table():
    table = rand((6, 3))
    emb = bnn.Embedding.from_pretrained(table, padding_idx=2)
    ref = torch.nn.Embedding.from_pretrained(torch.from_numpy(table), padding_idx=2)
    ids = np.array([[0, 2, 5]], np.int64)
    assert not emb.weight.requires_grad and emb.padding_idx == ref.padding_idx
    np.testing.assert_array_equal(run(burnedge.trace(emb, ids), {"input": ids})["output"], torch_out(ref, ids))
