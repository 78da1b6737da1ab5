"""A burnedge Model as a `torch.nn.Module` (the torch backend's GraphModule) and trained weights back into it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..backends.torch import BACKEND, INSTALL, GraphModule
from ..errors import BurnedgeError, WeightsError
from ..model import Model
from ..nn.weights import write_safetensors

__all__ = ["from_torch", "state_arrays", "to_torch"]


def state_arrays(state: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """A state dict as numpy arrays on the host (bfloat16 as float32: numpy has no bfloat16 of its own)."""
    out = {}
    for k, v in state.items():
        if hasattr(v, "detach"):
            v = v.detach().cpu()
            v = v.float().numpy() if str(v.dtype) == "torch.bfloat16" else v.numpy()
        out[k] = np.asarray(v)
    return out


def to_torch(model: Model, device: str = "cpu") -> Any:
    """`model` as a torch.nn.Module on `device`: `forward(*inputs)` runs its graph with torch ops (the output
    tensor, or a tuple in the model's output order); every float weight is a Parameter under its original name,
    BatchNormalization's running statistics are buffers (updated in train mode, as torch.nn.BatchNorm does; the
    module starts in train mode, as torch modules do). An op the torch backend lacks is an UnsupportedOpError
    naming every such node."""
    if GraphModule is None:
        raise BurnedgeError(f"burnedge.train needs torch: {INSTALL}")
    if not isinstance(model, Model):
        raise BurnedgeError(f"to_torch needs a burnedge.Model, not {type(model).__name__}")
    graph = model.graph.copy()
    BACKEND.check(graph)
    return GraphModule(graph).to(device)


def from_torch(module: Any, model: Model, checkpoint: str | os.PathLike[str] | None = None) -> Model:
    """A new Model: `model` with the weights of `module` (its `state_dict()`, by name), ready to export.

    `module` is what `to_torch` made, or any torch module whose state dict uses the model's weight names (a plain
    PyTorch twin of a `burnedge.nn` model). Every weight of the model must be there with its shape; keys the
    model lacks are an error unless they hold no floats (torch's `num_batches_tracked`). `checkpoint` also
    writes the weights as a safetensors file under those names.
    """
    if not hasattr(module, "state_dict"):
        raise BurnedgeError(f"from_torch needs a torch.nn.Module, not {type(module).__name__}")
    state = state_arrays(module.state_dict())
    graph = model.graph.copy()
    names = module.state().keys() if isinstance(module, GraphModule) else None
    if names is None:  # another module: the model's float constants it names
        names = [n for n, v in graph.values.items() if v.data is not None and v.dtype.kind == "f" and n in state]
    problems = [f"missing {n!r}" for n in names if n not in state]
    unexpected = [k for k, a in state.items() if k not in graph.values and a.dtype.kind == "f"]
    problems += [f"unexpected {k!r}" for k in unexpected]
    written: dict[str, np.ndarray] = {}
    for n in names:
        if n not in state:
            continue
        v, arr = graph.values[n], state[n]
        if tuple(arr.shape) != v.shape:
            problems.append(f"{n!r}: shape {list(arr.shape)}, the model has {list(v.shape)}")
            continue
        v.data = np.ascontiguousarray(arr.astype(v.dtype, copy=False)).reshape(v.shape)
        written[n] = v.data
    if problems:
        raise WeightsError(f"the module's weights do not fit model {model.name!r}: {'; '.join(problems)}")
    if not written:
        raise WeightsError(f"the module shares no weight names with model {model.name!r}")
    if checkpoint is not None:
        write_safetensors(checkpoint, written)
    return Model(graph, name=model.name, source=model.source, producer=model.producer)
