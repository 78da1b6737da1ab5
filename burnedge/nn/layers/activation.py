"""Activation modules: ReLU, ReLU6, LeakyReLU, GELU, SiLU, Sigmoid, Tanh, Hardswish, Hardsigmoid, Softmax..."""

from __future__ import annotations

from typing import Any

from .. import functional_act as A
from ..module import Module

__all__ = [
    "ELU",
    "GELU",
    "Hardsigmoid",
    "Hardswish",
    "LeakyReLU",
    "LogSoftmax",
    "ReLU",
    "ReLU6",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "Tanh",
]


class _Inplace(Module):
    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace


class ReLU(_Inplace):
    def forward(self, input: Any) -> Any:
        return A.relu(input)


class ReLU6(_Inplace):
    def forward(self, input: Any) -> Any:
        return A.relu6(input)


class SiLU(_Inplace):
    def forward(self, input: Any) -> Any:
        return A.silu(input)


class Hardswish(_Inplace):
    def forward(self, input: Any) -> Any:
        return A.hardswish(input)


class Hardsigmoid(_Inplace):
    def forward(self, input: Any) -> Any:
        return A.hardsigmoid(input)


class Sigmoid(Module):
    def forward(self, input: Any) -> Any:
        return A.sigmoid(input)


class Tanh(Module):
    def forward(self, input: Any) -> Any:
        return A.tanh(input)


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Any) -> Any:
        return A.leaky_relu(input, self.negative_slope)


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Any) -> Any:
        return A.elu(input, self.alpha)


class GELU(Module):
    """approximate="none" (erf) or "tanh"."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Any) -> Any:
        return A.gelu(input, self.approximate)


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Any) -> Any:
        return A.softplus(input, self.beta, self.threshold)


class Softmax(Module):
    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Any:
        return A.softmax(input, self.dim)


class LogSoftmax(Module):
    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Any:
        return A.log_softmax(input, self.dim)
