"""burnedge.nn.functional: torch.nn.functional's names and signatures over traced tensors."""

from __future__ import annotations

from ._math import matmul, where
from ._shape import cat, chunk, split, stack
from .functional_act import (
    dropout,
    elu,
    embedding,
    gelu,
    hardsigmoid,
    hardswish,
    leaky_relu,
    log_softmax,
    relu,
    relu6,
    sigmoid,
    silu,
    softmax,
    softplus,
    tanh,
)
from .functional_conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d, linear, pad
from .functional_norm import batch_norm, group_norm, layer_norm, normalize
from .functional_pool import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    avg_pool1d,
    avg_pool2d,
    interpolate,
    max_pool1d,
    max_pool2d,
)

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "batch_norm",
    "cat",
    "chunk",
    "conv1d",
    "conv2d",
    "conv_transpose1d",
    "conv_transpose2d",
    "dropout",
    "elu",
    "embedding",
    "gelu",
    "group_norm",
    "hardsigmoid",
    "hardswish",
    "interpolate",
    "layer_norm",
    "leaky_relu",
    "linear",
    "log_softmax",
    "matmul",
    "max_pool1d",
    "max_pool2d",
    "normalize",
    "pad",
    "relu",
    "relu6",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
    "split",
    "stack",
    "tanh",
    "where",
]
