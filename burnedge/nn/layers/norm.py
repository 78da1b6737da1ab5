"""BatchNorm1d/2d (running statistics as buffers), LayerNorm and GroupNorm, named and shaped as in torch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import BurnedgeError
from .. import functional_norm as N
from .._state import current
from ..module import Module
from ..tensor import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "GroupNorm", "LayerNorm"]


class _BatchNorm(Module):
    ranks: tuple[int, ...] = ()

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
    ):
        super().__init__()
        self.num_features, self.eps, self.momentum = int(num_features), float(eps), momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(np.ones(num_features, np.float32)) if affine else None
        self.bias = Parameter(np.zeros(num_features, np.float32)) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", np.zeros(num_features, np.float32))
            self.register_buffer("running_var", np.ones(num_features, np.float32))
            self.register_buffer("num_batches_tracked", np.array(0, np.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def forward(self, input: Any) -> Any:
        if input.ndim not in self.ranks:
            raise _error(f"expected {' or '.join(f'{r}-D' for r in self.ranks)} input, got shape {list(input.shape)}")
        if input.shape[1] != self.num_features:
            raise _error(f"expected input with {self.num_features} channels, got {input.shape[1]}")
        use_batch = self.training or not self.track_running_stats
        return N.batch_norm(
            input,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            use_batch,
            self.momentum or 0.0,
            self.eps,
        )

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, affine={self.affine}"


def _error(message: str) -> Exception:
    return current().error(message)


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L)."""

    ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W)."""

    ranks = (4,)


class LayerNorm(Module):
    """Normalizes over the trailing `normalized_shape` dims; weight and bias of that shape."""

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ):
        super().__init__()
        shape = (int(normalized_shape),) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, float(eps), elementwise_affine
        self.weight = Parameter(np.ones(shape, np.float32)) if elementwise_affine else None
        self.bias = Parameter(np.zeros(shape, np.float32)) if elementwise_affine and bias else None

    def forward(self, input: Any) -> Any:
        return N.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    """Normalizes groups of channels of (N, C, *) input; weight and bias (C,)."""

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Any = None,
        dtype: Any = None,
    ):
        super().__init__()
        if num_channels % num_groups:
            raise BurnedgeError(f"GroupNorm: num_channels {num_channels} must divide by num_groups {num_groups}")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, float(eps), affine
        self.weight = Parameter(np.ones(num_channels, np.float32)) if affine else None
        self.bias = Parameter(np.zeros(num_channels, np.float32)) if affine else None

    def forward(self, input: Any) -> Any:
        if input.ndim < 2 or input.shape[1] != self.num_channels:
            raise _error(f"expected input with {self.num_channels} channels, got shape {list(input.shape)}")
        return N.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"
