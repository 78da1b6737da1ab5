"""The torch backend's op table: one torch function per ONNX op, and the call context it receives.

A torch op looks like this::

    @op("Relu")
    def relu(c: Call, x):
        return torch.relu(x)

- positional parameters after `c` are the node's inputs as torch tensors (None for an omitted optional input);
- `c.attr(name, default)` reads an attribute; `c.ints(i)` an input known at compile time (a Reshape's shape)
  as a list of ints; `c.dtype(i)` / `c.shape(i)` the planned dtype and shape of output i;
- it returns one tensor or a tuple (several outputs); the module casts each to its planned dtype.

Ops are found by directory convention: every `ops_*.py` of this package registers its own.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import torch

from ...ir import Graph, Node

__all__ = ["DTYPES", "Call", "find", "op", "to_numpy", "to_tensor", "torch_dtype"]

DTYPES = {
    "float16": torch.float16,
    "float32": torch.float32,
    "float64": torch.float64,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "bool": torch.bool,
    "bfloat16": torch.bfloat16,
}

_OPS: dict[tuple[str, str], Callable[..., Any]] = {}
_loaded = False


def torch_dtype(dtype: Any) -> torch.dtype:
    return DTYPES[np.dtype(dtype).name]


def to_tensor(array: np.ndarray) -> torch.Tensor:
    """A numpy array as a torch tensor of its own (bfloat16, ml_dtypes' in numpy, travels as its 16 bits)."""
    a = np.array(array, order="C")  # a copy (ascontiguousarray would make a 0-d array 1-d)
    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """A tensor's values as a numpy array of their own, on the host."""
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16).copy()
    return t.numpy().copy()


def op(*names: str, domain: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: registers a torch function for the ONNX ops `names`, every opset version."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        for name in names:
            if (domain, name) in _OPS:
                raise RuntimeError(f"two torch functions for {domain + '.' if domain else ''}{name}")
            _OPS[(domain, name)] = fn
        return fn

    return deco


def find(node: Node) -> Callable[..., Any] | None:
    """The torch function of `node`'s op, or None when the torch backend lacks it."""
    global _loaded
    if not _loaded:
        _loaded = True
        for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
            if info.name.startswith("ops_"):
                importlib.import_module(f"{__package__}.{info.name}")
    return _OPS.get((node.op.domain, node.op.name))


@dataclass
class Call:
    """What a torch op knows of its node besides its input tensors: attributes, compile-time inputs, planned
    output types."""

    node: Node
    graph: Graph
    training: bool = False  # the module's train() / eval() mode: BatchNormalization uses batch statistics
    _ints: dict[int, list[int]] = field(default_factory=dict, repr=False)  # constant inputs as ints, read once
    memo: dict[Any, Any] = field(default_factory=dict, repr=False)  # what an op works out once per input shape

    def __post_init__(self) -> None:
        # the small integer constants (shapes, axes, pads) as ints now, in eager Python: torch.compile traces numpy
        # calls as tensor ops, so reading them while it traces would break the graph at every int()
        for i in range(len(self.node.inputs)):
            data = self.const(i)
            if data is not None and np.asarray(data).dtype.kind in "iub" and np.asarray(data).size <= 64:
                self._ints[i] = [int(v) for v in np.asarray(data).reshape(-1)]

    @property
    def since(self) -> int:
        """The opset version the node's op definition starts at (Softmax before 13 flattens, say)."""
        return self.node.op.since

    def attr(self, name: str, default: Any = None) -> Any:
        v = self.node.attrs.get(name, default)
        return default if v is None else v

    def const(self, i: int) -> np.ndarray | None:
        """Input i's value when it is a constant of the graph, else None."""
        if i >= len(self.node.inputs) or not self.node.inputs[i]:
            return None
        v = self.graph.values.get(self.node.inputs[i])
        return None if v is None else v.data

    def ints(self, i: int, tensor: torch.Tensor | None = None) -> list[int] | None:
        """Input i as a list of ints: from the graph when constant, else from its run-time tensor (None: absent)."""
        if i in self._ints:
            return list(self._ints[i])
        data = self.const(i)
        if data is not None:
            self._ints[i] = [int(v) for v in np.asarray(data).reshape(-1)]
            return list(self._ints[i])
        return None if tensor is None else [int(v) for v in tensor.reshape(-1).tolist()]

    def shape(self, i: int = 0) -> tuple[int, ...]:
        return self.graph.values[self.node.outputs[i]].shape

    def dtype(self, i: int = 0) -> torch.dtype:
        return torch_dtype(self.graph.values[self.node.outputs[i]].dtype)
