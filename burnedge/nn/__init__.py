"""burnedge.nn: define a model as in PyTorch (modules, parameters named as torch names them), load its
safetensors or state dict, and trace it into a burnedge Model.

numpy only: torch is needed only to read .pt/.pth checkpoints. Layers take torch.nn's constructor arguments
and defaults; `forward` is plain Python over traced tensors (see `burnedge.nn.tensor`), and `burnedge.trace`
turns a module and its input shapes into a Model that exports like an imported ONNX model.
"""

from __future__ import annotations

from . import functional, init
from ._math import matmul, where
from ._shape import cat, chunk, flatten, permute, reshape, split, squeeze, stack, transpose, unsqueeze
from .containers import ModuleDict, ModuleList, Sequential
from .layers.activation import (
    ELU,
    GELU,
    Hardsigmoid,
    Hardswish,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
)
from .layers.conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .layers.linear import Dropout, Embedding, Flatten, Identity, Linear
from .layers.norm import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from .layers.pool import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from .module import Module
from .tensor import Buffer, Parameter, Tensor
from .toplevel import (
    abs,
    arange,
    clamp,
    exp,
    full,
    full_like,
    log,
    mean,
    ones,
    ones_like,
    relu,
    sigmoid,
    softmax,
    sqrt,
    sum,
    tanh,
    zeros,
    zeros_like,
)
from .trace import trace
from .weights import IncompatibleKeys, read_checkpoint

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "BatchNorm1d",
    "BatchNorm2d",
    "Buffer",
    "Conv1d",
    "Conv2d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "Dropout",
    "ELU",
    "Embedding",
    "Flatten",
    "GELU",
    "GroupNorm",
    "Hardsigmoid",
    "Hardswish",
    "Identity",
    "IncompatibleKeys",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "LogSoftmax",
    "MaxPool1d",
    "MaxPool2d",
    "Module",
    "ModuleDict",
    "ModuleList",
    "Parameter",
    "ReLU",
    "ReLU6",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "Tanh",
    "Tensor",
    "abs",
    "arange",
    "cat",
    "chunk",
    "clamp",
    "exp",
    "flatten",
    "full",
    "full_like",
    "functional",
    "init",
    "log",
    "matmul",
    "mean",
    "ones",
    "ones_like",
    "permute",
    "read_checkpoint",
    "relu",
    "reshape",
    "sigmoid",
    "softmax",
    "split",
    "sqrt",
    "squeeze",
    "stack",
    "sum",
    "tanh",
    "trace",
    "transpose",
    "unsqueeze",
    "where",
    "zeros",
    "zeros_like",
]
