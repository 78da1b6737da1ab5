"""burnedge.nn.functional and traced Tensor operations against torch: the same expression written once, run by
torch on arrays and by burnedge traced (numpy backend; a subset on C)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import burnedge
import burnedge.nn as bnn
import burnedge.nn.functional as BF

from .common import rand, run

W = rand((4, 3, 3, 3), seed=5)  # a conv weight, a numpy constant in the expression
V = rand((5, 3), seed=6)


def c(L, array):
    """A numpy constant of an expression, as torch wants it (burnedge takes the array itself)."""
    return torch.from_numpy(array) if L is torch else array


# expression(L, F, x): L is torch or burnedge.nn, F their functional; x a (2, 3, 6, 6) float tensor
CASES = {
    "add-sub-mul-div": lambda L, F, x: (x + 1) * 2 - x / 3 + 0.5 - (1 - x),
    "rops": lambda L, F, x: 2 / (x.abs() + 1) + 3 * x - 1 // (x.abs() + 1),
    "floordiv-mod": lambda L, F, x: x // 0.7 + x % 0.7 + (x * 4) % -1.5,
    "pow-neg": lambda L, F, x: x**2 - (-x) ** 3 + 2 ** x.clamp(-1, 1),
    "compare": lambda L, F, x: (x > 0).float() + (x <= 0.5).float() * 2 + (x == x).float() + (x != 0.1).float(),
    "logic": lambda L, F, x: ((x > 0) & (x < 1) | ~(x > -0.5)).float(),
    "matmul": lambda L, F, x: x @ x.transpose(-1, -2),
    "matmul-const": lambda L, F, x: x.reshape(-1, 3) @ c(L, V.T.copy()),
    "unary": lambda L, F, x: x.abs().sqrt() + x.exp() + (x.abs() + 1).log() + x.tanh() + x.sigmoid() + x.relu(),
    "rsqrt-recip": lambda L, F, x: (x.abs() + 1).rsqrt() + (x.abs() + 1).reciprocal(),
    "clamp": lambda L, F, x: x.clamp(-0.5, 0.7) + x.clamp(min=0.1) + x.clamp(max=-0.2),
    "clamp-tensor": lambda L, F, x: x.clamp(min=x.mean(dim=1, keepdim=True)),
    "mean-sum": lambda L, F, x: x.mean(dim=(2, 3)) + x.sum(dim=1).sum(-1).sum(-1, keepdim=True) + x.mean(),
    "mean-keepdim": lambda L, F, x: x - x.mean(dim=-1, keepdim=True) + x.sum(1, keepdim=True),
    "max-min": lambda L, F, x: x.max(dim=1).values + x.min(dim=1).values + x.max() - x.min(),
    "max-indices": lambda L, F, x: x.max(dim=-1, keepdim=True).indices.float() + x.argmax(dim=2).float().sum(),
    "max-elementwise": lambda L, F, x: L.max(x, x * 0.5) if L is torch else x.max(x * 0.5),
    "softmax": lambda L, F, x: x.softmax(dim=1) + F.softmax(x, dim=-1) + F.log_softmax(x, dim=2),
    "reshape-view": lambda L, F, x: x.reshape(2, -1).view(6, 2, 18).flatten(1).reshape((4, 54)),
    "flatten": lambda L, F, x: x.flatten(1, 2) + x.flatten().reshape(2, 18, 6),
    "permute-transpose": lambda L, F, x: x.permute(0, 2, 3, 1).transpose(1, 2).contiguous(),
    "T-t": lambda L, F, x: x[0, 0].t() + x[0, 1].T,
    "squeeze-unsqueeze": lambda L, F, x: x[:, :1].squeeze(1).unsqueeze(-1).squeeze() + x[:, 0, :, :1],
    "squeeze-noop": lambda L, F, x: x.squeeze(1) + x.unsqueeze(0).squeeze(0),
    "expand": lambda L, F, x: x[:, :1].expand(2, 3, 6, 6) + x.mean(dim=1, keepdim=True).expand(-1, 3, -1, -1),
    "expand-lead": lambda L, F, x: x[0, 0, 0].expand(4, 2, 6),
    "repeat": lambda L, F, x: x[:, :1].repeat(1, 2, 1, 1),
    "index-int-slice": lambda L, F, x: x[0, 1:, ::2, -1],
    "index-none-ellipsis": lambda L, F, x: x[..., None, 1:3][:, 0] + x[None, :, 0, ..., :2, None][0],
    "index-tensor": lambda L, F, x: x[:, [2, 0, 1]] + x[:, :, [5, 0, 1, 2, 3, 4]],
    "index-int-then-tensor": lambda L, F, x: x[1, :, [1, 3]],
    "size-len": lambda L, F, x: x.reshape(x.size(0), len(x[0]), x.shape[2] * x.shape[3]) * x.numel() / x.dim(),
    "cat-stack": lambda L, F, x: L.cat([x, x * 2], dim=1).sum(1) + L.stack([x, -x], dim=-1).sum(-1).sum(1),
    "split-chunk": lambda L, F, x: L.split(x, 2, dim=1)[1] + x.split([1, 2], dim=1)[0] + x.chunk(3, dim=1)[2],
    "chunk-uneven": lambda L, F, x: L.chunk(x, 4, dim=3)[-1] * 2,
    "unbind": lambda L, F, x: x.unbind(1)[2] - x.unbind(dim=1)[0],
    "where": lambda L, F, x: L.where(x > 0, x, 0.1 * x) + L.where(x < 0.3, 1.0, x),
    "masked-fill": lambda L, F, x: x.masked_fill(x > 0.5, -1.0),
    "pad-constant": lambda L, F, x: F.pad(x, (1, 2, 0, 1), value=0.5),
    "pad-reflect": lambda L, F, x: F.pad(x, (2, 1, 1, 3), mode="reflect"),
    "pad-replicate": lambda L, F, x: F.pad(x, (3, 0, 1, 1), mode="replicate"),
    "pad-crop": lambda L, F, x: F.pad(x, (-1, 1)),
    "linear": lambda L, F, x: F.linear(x.reshape(12, 18)[:, :3], V, V[:, 0]) + F.linear(x[..., :3], V).sum(),
    "conv2d": lambda L, F, x: (
        F.conv2d(x, W, None, 2, 1) + F.conv2d(x, W, W[:, 0, 0, 0], padding="same")[:, :, ::2, ::2]
    ),
    "conv1d": lambda L, F, x: F.conv1d(x[:, :, 0], W[:, :, 0], stride=1, padding=2, dilation=2),
    "conv-t": lambda L, F, x: F.conv_transpose2d(x[:, :, :3, :3], W.transpose(1, 0, 2, 3), stride=2, output_padding=1),
    "conv-t1d": lambda L, F, x: F.conv_transpose1d(x[:, :, 0], W[:, :, 0].transpose(1, 0, 2).copy(), padding=1),
    "activations": lambda L, F, x: (
        F.relu(x)
        + F.relu6(x * 4)
        + F.leaky_relu(x, 0.1)
        + F.gelu(x)
        + F.gelu(x, approximate="tanh")
        + F.silu(x)
        + F.sigmoid(x)
        + F.tanh(x)
        + F.hardswish(x * 3)
        + F.hardsigmoid(x * 3)
        + F.elu(x)
    ),
    "norms": lambda L, F, x: (
        F.layer_norm(x, (6,), V[0].repeat(2), None, 1e-3)
        + F.group_norm(x, 3)
        + F.batch_norm(
            x,
            L.ones(3) * 0.1 if L is torch else np.full(3, 0.1, np.float32),
            L.ones(3) * 2 if L is torch else np.full(3, 2, np.float32),
        )
    ),
    "interp-nearest": lambda L, F, x: (
        F.interpolate(x, scale_factor=2)[..., :5] + F.interpolate(x, size=(12, 5))[..., :5]
    ),
    "interp-nearest-odd": lambda L, F, x: F.interpolate(x, size=(4, 9), mode="nearest"),
    "interp-bilinear": lambda L, F, x: F.interpolate(x, scale_factor=2, mode="bilinear"),
    "interp-bilinear-ac": lambda L, F, x: F.interpolate(x, size=(5, 11), mode="bilinear", align_corners=True),
    "interp-bilinear-down": lambda L, F, x: F.interpolate(x, size=(4, 3), mode="bilinear", align_corners=False),
    "interp-linear": lambda L, F, x: F.interpolate(x[:, :, 0], scale_factor=1.5, mode="linear"),
    "pools": lambda L, F, x: F.max_pool2d(x, 2) + F.avg_pool2d(x, 3, 2, 1) + F.adaptive_avg_pool2d(x, (3, 3)),
    "pools-1d": lambda L, F, x: (
        F.max_pool1d(x[:, :, 0], 2) + F.avg_pool1d(x[:, :, 1], 2) + F.adaptive_avg_pool1d(x[:, :, 2], 3)
    ),
    "adaptive-uneven": lambda L, F, x: F.adaptive_avg_pool2d(x, (4, 5)),
    "dropout": lambda L, F, x: F.dropout(x, 0.4, training=False) * 2,
    "matmul-fn": lambda L, F, x: F.matmul(x, x[0, 0]) if F is BF else L.matmul(x, x[0, 0]),
    "toplevel": lambda L, F, x: (
        L.sigmoid(x)
        + L.tanh(x)
        + L.relu(x)
        + L.exp(x.clamp(max=1))
        + L.sqrt(x.abs())
        + L.abs(x)
        + L.clamp(x, -0.2, 0.3)
        + L.softmax(x, dim=1)
        + L.mean(x, dim=1, keepdim=True)
        + L.sum(x, 2, True)
    ),
    "constants": lambda L, F, x: (
        x
        + L.zeros(2, 3, 6, 6)
        + L.ones(6) * 2
        + L.full((6,), 1.5)
        + L.arange(6)
        + L.zeros_like(x)
        + L.ones_like(x)
        + L.full_like(x, 0.5)
        + L.arange(0, 3, 0.5)
        + L.arange(1, 12, 2)
    ),
    "embedding-fn": lambda L, F, x: F.embedding((x.abs() * 2).long().clamp(0, 4), c(L, V)),
    "var-std": lambda L, F, x: (
        x.var(dim=-1, keepdim=True)
        + x.std(1).sum()
        + x.var(dim=(2, 3), unbiased=False).mean()
        + x.var()
        + x.std(dim=0, correction=0)
    ),
    "pad-circular": lambda L, F, x: F.pad(x, (2, 1, 0, 3), mode="circular"),
    "normalize": lambda L, F, x: F.normalize(x) + F.normalize(x, p=1.0, dim=-1, eps=1e-3),
    "cast": lambda L, F, x: (x * 3).long().float() + (x > 0).int().float(),
}

ON_C = [
    "add-sub-mul-div",
    "matmul",
    "softmax",
    "index-int-slice",
    "cat-stack",
    "pad-reflect",
    "conv2d",
    "norms",
    "interp-bilinear",
    "pools",
    "activations",
    "where",
]


class Expr(bnn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(bnn, BF, x)


def _torch(fn, x: np.ndarray) -> np.ndarray:
    def lift(v):
        return torch.from_numpy(v) if isinstance(v, np.ndarray) else v

    class TorchF:  # torch's functional, taking the numpy constants of an expression as tensors
        def __getattr__(self, name):
            f = getattr(TF, name)
            return lambda *a, **k: f(*[lift(v) for v in a], **{n: lift(v) for n, v in k.items()})

    class TorchL:
        def __getattr__(self, name):
            return getattr(torch, name)

    with torch.no_grad():
        out = fn(torch, TorchF(), torch.from_numpy(x))
    return out.numpy()


@pytest.mark.parametrize("name", list(CASES))
def test_expression_matches_torch(name):
    x = rand((2, 3, 6, 6), seed=3)
    fn = CASES[name]
    want = _torch(fn, x)
    model = burnedge.trace(Expr(fn), {"x": (2, 3, 6, 6)})
    got = run(model, {"x": x})["output"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want.astype(got.dtype), rtol=1e-5, atol=1e-5)


class Several(bnn.Module):
    def forward(self, x):
        return {name: CASES[name](bnn, BF, x) for name in ON_C}


def test_expressions_on_the_c_backend():
    """A subset of the expressions, traced into one model (one C build), on the C backend."""
    x = rand((2, 3, 6, 6), seed=3)
    model = burnedge.trace(Several(), x)
    assert [o.name for o in model.outputs] == ON_C
    got = run(model, {"x": x}, "c")
    for name in ON_C:
        np.testing.assert_allclose(got[name], _torch(CASES[name], x), rtol=1e-5, atol=1e-5, err_msg=name)


# torch has no negative steps nor numpy operands on the left: these run against numpy itself
NUMPY_CASES = {
    "neg-steps": lambda x: x[:, ::-1, 4:1:-2, ::-3],
    "neg-step-to-start": lambda x: x[:, 2::-1, ::-1],
    "array-left": lambda x: (
        np.float32(2.0) * x + np.arange(6, dtype=np.float32) * x - np.ones(6, np.float32) / (x * x + 1)
    ),
    "array-compare": lambda x: (np.zeros(6, np.float32) < x) | (np.full(6, 0.5, np.float32) >= x),
}


@pytest.mark.parametrize("name", list(NUMPY_CASES))
def test_expression_matches_numpy(name):
    x = rand((2, 3, 6, 6), seed=4)
    fn = NUMPY_CASES[name]

    class Numpyish(bnn.Module):
        def forward(self, x):
            return fn(x)

    model = burnedge.trace(Numpyish(), {"x": x.shape})
    got, want = run(model, {"x": x})["output"], fn(x)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_the_joining_functions_are_in_both_namespaces():
    for name in ("cat", "stack", "split", "chunk", "where", "matmul"):
        assert getattr(BF, name) is getattr(bnn, name), name
