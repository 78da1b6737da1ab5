"""A Graph as a `torch.nn.Module`: the nodes run in plan order with torch ops, differentiable end to end.

Who owns what: the module owns one tensor per constant of the graph. Float weights are `torch.nn.Parameter`s under
their original names; BatchNormalization's running statistics are buffers in the state dict (a module in train
mode updates them, as torch.nn.BatchNorm does); other constants (shapes, indices, the tracer's generated numbers)
are buffers left out of the state dict. Names keep PyTorch's form:

- a dotted name of identifiers and indices (``features.0.weight``, as `burnedge.nn` and the zoo name weights)
  becomes nested submodules, so `named_parameters()` and `state_dict()` read exactly as in PyTorch;
- any other name (``onnx::Conv_123``, ``/conv1/weight``) is made attribute-safe (``onnx__Conv_123``) on the
  root module, while `state_dict()` and `load_state_dict()` use the original name (hooks translate both ways).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch

from ...errors import BurnedgeError, ModelError
from ...ir import Graph
from .registry import DTYPES, Call, find, to_tensor, torch_dtype

__all__ = ["GraphModule", "is_weight"]

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$|^[0-9]+$")
_GENERATED = re.compile(r"(^|/)const(_\d+)?$")  # burnedge.nn's tracer names its literal numbers <path>/const_<n>


def is_weight(name: str, data: np.ndarray) -> bool:
    """A constant that training updates: a float array that the model file (or module) named, not a literal."""
    floating = data.dtype.kind == "f" or data.dtype.name == "bfloat16"
    return floating and data.ndim > 0 and not _GENERATED.search(name)


def _safe(name: str, taken: set[str], owner: Any = None) -> str:
    """An attribute name for `name` not in `taken` (which it joins) nor already an attribute of `owner`."""
    s = re.sub(r"\W", "_", name) or "_"
    s = "_" + s if s[0].isdigit() else s
    base, k = s, 1
    while s in taken or (owner is not None and hasattr(owner, s)):
        s, k = f"{base}_{k}", k + 1
    taken.add(s)
    return s


class GraphModule(torch.nn.Module):
    """Runs `graph` with torch ops. `forward(*inputs)` takes the graph inputs in order (or by name) and returns
    the output tensor, or a tuple of them in the graph's output order.

    `check=True` (the backend's executables) compares every result's shape with the plan's; a module for training
    leaves it off, so a batch of another size runs too.
    """

    def __init__(self, graph: Graph, check: bool = False):
        super().__init__()
        self.graph = graph
        self.check = check
        self._where: dict[str, tuple[torch.nn.Module, str]] = {}  # original name -> (owner, attribute)
        self._renamed: dict[str, str] = {}  # attribute-safe root name -> original name (state dict keys)
        taken: set[str] = set()
        stats = {n for node in graph.nodes if node.op_type == "BatchNormalization" for n in node.inputs[3:5]}
        for name, v in graph.values.items():
            if v.data is None or v.dtype.name not in DTYPES:  # a string constant: only ever a folded output
                continue
            data = v.data
            tensor = to_tensor(data)
            if name in stats and is_weight(name, data):  # running statistics: state, not trained by gradients
                self._add_state(name, tensor, taken)
            elif is_weight(name, data):
                self._add_state(name, torch.nn.Parameter(tensor), taken)
            else:
                attr = _safe("_const_" + name, taken, owner=self)
                self.register_buffer(attr, tensor, persistent=False)
                self._where[name] = (self, attr)
        self.calls = [(Call(node, graph, self.training), find(node)) for node in graph.nodes]
        missing = sorted({c.node.op.key for c, fn in self.calls if fn is None})
        if missing:
            raise BurnedgeError(f"the torch backend has no function for {', '.join(missing)}")
        # each constant's slot: the owner's own parameter or buffer table (nn.Module.__getattr__ is slow)
        self._slots = [
            (name, owner._parameters if attr in owner._parameters else owner._buffers, attr)
            for name, (owner, attr) in self._where.items()
        ]
        # per node, worked out once: its function, its input names, and (index, name, dtype, shape) per output,
        # so a forward pass does no lookups in the graph (a step's Python cost is most of a small net's on a GPU)
        self._steps = [
            (
                call,
                fn,
                tuple(call.node.inputs),
                tuple(
                    (k, name, torch_dtype(graph.values[name].dtype), graph.values[name].shape)
                    for k, name in enumerate(call.node.outputs)
                    if name
                ),
            )
            for call, fn in self.calls
        ]
        self._register_state_dict_hook(_original_keys)
        self.register_load_state_dict_pre_hook(_safe_keys)

    def train(self, mode: bool = True) -> GraphModule:
        super().train(mode)
        for call, _ in self.calls:
            call.training = mode
        return self

    def _register(self, owner: torch.nn.Module, attr: str, tensor: torch.Tensor) -> None:
        if isinstance(tensor, torch.nn.Parameter):
            owner.register_parameter(attr, tensor)
        else:
            owner.register_buffer(attr, tensor)

    def _add_state(self, name: str, tensor: torch.Tensor, taken: set[str]) -> None:
        """Places a parameter (or a state buffer) under its name: nested modules, else a safe root name."""
        parts = name.split(".")
        owner: torch.nn.Module = self
        if all(_IDENT.match(p) for p in parts) and parts[0] not in taken:
            for p in parts[:-1]:
                child = owner._modules.get(p)
                if child is None:
                    if hasattr(owner, p):
                        break
                    child = torch.nn.Module()
                    owner.add_module(p, child)
                owner = child
            else:
                if not hasattr(owner, parts[-1]):
                    self._register(owner, parts[-1], tensor)
                    self._where[name] = (owner, parts[-1])
                    return
        attr = _safe(name, taken, owner=self)
        self._register(self, attr, tensor)
        self._where[name] = (self, attr)
        self._renamed[attr] = name

    def tensor(self, name: str) -> torch.Tensor:
        """The module's tensor for a constant of the graph, by its original name."""
        owner, attr = self._where[name]
        return getattr(owner, attr)

    def state(self) -> dict[str, torch.Tensor]:
        """What training changes, by original name: every parameter and running statistic (the state dict)."""
        keys = set(self.state_dict())
        return {n: self.tensor(n) for n in self._where if n in keys}

    def forward(self, *args: torch.Tensor, **kwargs: torch.Tensor) -> Any:
        env = self.run_graph(dict(zip(self.graph.inputs, args)) | kwargs)
        outs = tuple(env[n] for n in self.graph.outputs)
        return outs[0] if len(outs) == 1 else outs

    def run_graph(
        self,
        feeds: Mapping[str, torch.Tensor],
        hook: Callable[[int, Mapping[str, torch.Tensor]], None] | None = None,
    ) -> dict[str, torch.Tensor]:
        """Every tensor of the run by name (inputs, constants and node outputs); `hook(i, env)` after node i."""
        g = self.graph
        absent = [n for n in g.inputs if n not in feeds]
        if absent:
            raise BurnedgeError(f"missing input(s) {absent}; the model takes {list(g.inputs)}")
        env: dict[str, torch.Tensor] = {n: table[attr] for n, table, attr in self._slots}
        env.update(feeds)
        # under autocast a float result keeps the precision autocast gave it (bf16 convolutions stay bf16, as in
        # a torch.nn model); a cast back to the planned float32 after every node would undo the tensor cores
        mixed = torch.is_autocast_enabled("cuda") or torch.is_autocast_enabled("cpu")
        for i, (call, fn, names, outs) in enumerate(self._steps):
            try:
                result = fn(call, *[env[n] if n else None for n in names])
            except BurnedgeError:
                raise
            except Exception as exc:  # a node torch rejects: say which one and why
                node = call.node
                raise ModelError(
                    f"node {node.name!r} ({node.op_type}) failed on torch: {type(exc).__name__}: {exc}"
                ) from exc
            results = result if isinstance(result, (tuple, list)) else (result,)
            for k, name, want, shape in outs:
                r = results[k] if k < len(results) else None
                if r is None:
                    node = call.node
                    raise ModelError(f"node {node.name!r} ({node.op_type}): the torch backend computes no output {k}")
                if r.dtype != want and not (mixed and r.is_floating_point() and want.is_floating_point):
                    r = r.to(want)
                if self.check and tuple(r.shape) != shape:
                    node = call.node
                    raise BurnedgeError(
                        f"node {node.name!r} ({node.op_type}) produced {list(r.shape)} for {name!r} on torch; "
                        f"the plan expects {list(shape)}"
                    )
                env[name] = r
            if hook is not None:
                hook(i, env)
        return env


def _original_keys(module: GraphModule, state: dict[str, Any], prefix: str, local_metadata: Any) -> None:
    for attr, name in module._renamed.items():
        if prefix + attr in state:
            state[prefix + name] = state.pop(prefix + attr)


def _safe_keys(module: GraphModule, state: dict[str, Any], prefix: str, *_: Any) -> None:
    for attr, name in module._renamed.items():
        if prefix + name in state:
            state[prefix + attr] = state.pop(prefix + name)
