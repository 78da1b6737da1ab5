"""burnedge's fused ops in torch (the registry's fused.py): FusedConv, FusedGemm, FusedMatMul and Elementwise.

The passes make them (`burnedge.passes`), so a graph prepared for int8 (optimised, then split to the int8 ops'
granularity) holds them; quantization-aware training runs that graph, so that every tensor it fake-quantizes is
one the int8 graph computes. The epilogue is ops/fused.py's: ``y = act(op(x) + R)``, differentiable.
"""

from __future__ import annotations

import math

import torch

from .module import GraphModule
from .ops_nn import conv, gemm
from .registry import Call, op

__all__ = ["ACTIVATIONS"]

ACTIVATIONS = {
    "": lambda y, p: y,
    "Relu": lambda y, p: torch.relu(y),
    "Clip": lambda y, p: torch.clamp(y, p[0], p[1]),
    "LeakyRelu": lambda y, p: torch.where(y >= 0, y, y * p[0]),
    "HardSigmoid": lambda y, p: torch.clamp(y * p[0] + p[1], 0, 1),
    "HardSwish": lambda y, p: y * torch.clamp(y / 6 + 0.5, 0, 1),
    "Sigmoid": lambda y, p: torch.sigmoid(y),
    "Tanh": lambda y, p: torch.tanh(y),
    "Gelu": lambda y, p: y * 0.5 * (1 + torch.erf(y / math.sqrt(2))),
}


def _epilogue(c: Call, y: torch.Tensor, r: torch.Tensor | None) -> torch.Tensor:
    act = c.attr("activation", "")
    if act not in ACTIVATIONS:
        raise ValueError(f"unknown epilogue activation {act!r}; known: {sorted(ACTIVATIONS)}")
    if r is not None:
        y = y + r
    return ACTIVATIONS[act](y, list(c.attr("activation_params", ())))


@op("FusedConv", domain="burnedge")
def fused_conv(c: Call, x, w, b=None, r=None):
    return _epilogue(c, conv(c, x, w, b), r)


@op("FusedGemm", domain="burnedge")
def fused_gemm(c: Call, a, b, bias=None, r=None):
    return _epilogue(c, gemm(c, a, b, bias), r)


@op("FusedMatMul", domain="burnedge")
def fused_matmul(c: Call, a, b, bias=None, r=None):
    y = torch.matmul(a, b)
    return _epilogue(c, y if bias is None else y + bias, r)


@op("Elementwise", domain="burnedge")
def elementwise(c: Call, *xs):
    """The fused chain's body, run node by node with the torch functions of its ops (one module, kept)."""
    body = c.__dict__.get("_body")
    if body is None:
        body = c.__dict__["_body"] = GraphModule(c.attr("body"))
    body = body.to(xs[0].device)
    return body(*xs)
