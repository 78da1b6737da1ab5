"""Linear, Embedding, Dropout, Flatten and Identity."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import functional_act as A
from .. import functional_conv as C
from .._shape import flatten
from ..init import normal, uniform
from ..module import Module
from ..tensor import Parameter

__all__ = ["Dropout", "Embedding", "Flatten", "Identity", "Linear"]


class Linear(Module):
    """y = x @ weight.T + bias; weight (out_features, in_features)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None):
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        bound = 1.0 / math.sqrt(in_features) if in_features else 0.0
        self.weight = Parameter(uniform((out_features, in_features), bound))
        self.bias = Parameter(uniform((out_features,), bound)) if bias else None

    def forward(self, input: Any) -> Any:
        return C.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """A lookup table: weight (num_embeddings, embedding_dim), N(0, 1) at first, the padding row zero."""

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Any = None,
        _freeze: bool = False,
        device: Any = None,
        dtype: Any = None,
    ):
        super().__init__()
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        if padding_idx is not None and padding_idx < 0:
            padding_idx += num_embeddings
        self.padding_idx, self.max_norm = padding_idx, max_norm
        w = normal((num_embeddings, embedding_dim)) if _weight is None else np.asarray(_weight, np.float32)
        if padding_idx is not None and _weight is None:
            w[padding_idx] = 0
        self.weight = Parameter(w, requires_grad=not _freeze)

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True, padding_idx: int | None = None, **kwargs: Any):
        """An Embedding holding `embeddings` (num_embeddings, embedding_dim), as torch's from_pretrained."""
        w = np.asarray(embeddings, np.float32)
        return cls(w.shape[0], w.shape[1], padding_idx, _weight=w, _freeze=freeze, **kwargs)

    def forward(self, input: Any) -> Any:
        return A.embedding(input, self.weight, self.padding_idx, self.max_norm)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"


class Dropout(Module):
    """The identity at inference (a traced model is for inference)."""

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        self.p, self.inplace = p, inplace

    def forward(self, input: Any) -> Any:
        return A.dropout(input, self.p, self.training)


class Flatten(Module):
    """Flattens dims start_dim..end_dim (default: all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Any) -> Any:
        return flatten(input, self.start_dim, self.end_dim)


class Identity(Module):
    """Returns its input (takes and ignores any constructor arguments, as torch's does)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input
