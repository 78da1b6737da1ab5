"""burnedge.trace: runs a Module's forward on traced tensors and returns the Model it computes.

Steps: name the inputs after forward's parameters (shapes and dtypes from `inputs`); name every module by its
path and every Parameter / Buffer by its state-dict name; run forward in eval mode under a Tracer; name the
outputs (a dict's keys, else ``output`` / ``output_0..``); then type, fold and verify the graph exactly as the
ONNX importer does (`importers.onnx.infer_and_fold`, `Graph.verify`).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import TraceError
from ..importers.onnx import infer_and_fold
from ..ir import Graph, Node, Value
from ..model import Model
from ..ops import for_onnx
from ._state import ACTIVE
from .module import Module
from .tensor import Tensor
from .tracer import OPSET, Tracer

__all__ = ["trace"]

InputSpec = Sequence[int] | np.ndarray


def _spec(name: str, value: Any) -> tuple[tuple[int, ...], np.dtype]:
    if isinstance(value, np.ndarray):
        return tuple(value.shape), value.dtype
    if isinstance(value, (tuple, list)) and all(isinstance(d, (int, np.integer)) and d >= 0 for d in value):
        return tuple(int(d) for d in value), np.dtype(np.float32)
    raise TraceError(f"input {name!r}: give a shape (a tuple of ints) or a numpy array, not {value!r}")


def _input_specs(module: Module, inputs: Any) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """forward's parameter name -> (shape, dtype), from a dict, or a single shape / array for one input."""
    cls = type(module).__name__
    params = list(inspect.signature(module.forward).parameters.values())
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        raise TraceError(f"{cls}.forward takes *args or **kwargs: tracing names inputs after its named parameters")
    names = [p.name for p in params]
    if not isinstance(inputs, Mapping):
        required = [p.name for p in params if p.default is p.empty]
        if len(required) != 1 and not (len(names) == 1 and not required):
            raise TraceError(
                f"{cls}.forward has inputs {names}: give a dict {{name: shape or array}}, not a single input"
            )
        inputs = {(required or names)[0]: inputs}
    unknown = [k for k in inputs if k not in names]
    if unknown:
        raise TraceError(f"{cls}.forward has no input(s) {unknown}; its inputs are {names}")
    absent = [p.name for p in params if p.default is p.empty and p.name not in inputs]
    if absent:
        raise TraceError(f"{cls}.forward needs input(s) {absent}: give their shapes (or arrays)")
    return {n: _spec(n, inputs[n]) for n in names if n in inputs}


def _flatten_outputs(result: Any, cls: str) -> list[tuple[str, Any]]:
    if isinstance(result, Mapping):
        pairs = [(str(k), v) for k, v in result.items()]
    elif isinstance(result, (tuple, list)):
        pairs = [(f"output_{i}", v) for i, v in enumerate(result)]
    else:
        pairs = [("output", result)]
    for name, v in pairs:
        if not isinstance(v, Tensor):
            raise TraceError(f"{cls}.forward returned {type(v).__name__} as output {name!r}; outputs must be tensors")
    if not pairs:
        raise TraceError(f"{cls}.forward returned no tensors")
    return pairs


def _name_outputs(tracer: Tracer, pairs: list[tuple[str, Any]]) -> list[str]:
    """Renames each output's value to its output name (an Identity where it is an input, a weight, or
    returned twice)."""
    producers = {o: node for node in tracer.nodes for o in node.outputs}
    taken: set[str] = set()
    out = []
    for name, t in pairs:
        t = tracer.lift(t)
        if name == t.name:  # an input returned under its own name
            out.append(name)
            continue
        if name in tracer.values:
            raise TraceError(f"output name {name!r} is already the name of a value of the graph")
        node = producers.get(t.name)
        if node is None or t.name in taken:
            tracer.nodes.append(Node(for_onnx("Identity", OPSET), f"{name}/Identity", [t.name], [name]))
            tracer.values[name] = Value(name, t.dtype, t.shape)
        else:
            old = t.name
            node.outputs = [name if o == old else o for o in node.outputs]
            for n in tracer.nodes:
                n.inputs = [name if i == old else i for i in n.inputs]
            v = tracer.values.pop(old)
            tracer.values[name] = Value(name, v.dtype, v.shape)
            producers[name] = node
            taken.add(name)
        out.append(name)
    return out


def trace(module: Module, inputs: Mapping[str, InputSpec] | InputSpec, name: str | None = None) -> Model:
    """Traces `module.forward` into a Model (what `burnedge.load` returns), in eval mode.

    `inputs` maps forward's parameter names to shapes (float32) or numpy arrays (their dtype and shape; the values
    are not used); a forward of one input also takes the shape or array alone. Outputs are named by the keys of a
    returned dict, else ``output`` (one tensor) or ``output_0``, ``output_1``... (a tuple or list).
    """
    if not isinstance(module, Module):
        raise TraceError(f"burnedge.trace needs a burnedge.nn.Module, not {type(module).__name__}")
    specs = _input_specs(module, inputs)
    paths = {id(m): p for p, m in module.named_modules()}
    weights: dict[int, str] = {}
    for n, w in [*module.named_parameters(), *module.named_buffers()]:
        weights.setdefault(id(w), n)
    tracer = Tracer(weights, paths)
    modes = [(m, m.training) for m in module.modules()]
    module.eval()
    token = ACTIVE.set(tracer)
    try:
        feeds = {n: tracer.input(n, shape, dtype) for n, (shape, dtype) in specs.items()}
        result = module(**feeds)
        outputs = _name_outputs(tracer, _flatten_outputs(result, type(module).__name__))
    finally:
        ACTIVE.reset(token)
        for m, mode in modes:
            object.__setattr__(m, "training", mode)
    graph = Graph(name or type(module).__name__, list(tracer.inputs), outputs, tracer.nodes, tracer.values, OPSET)
    infer_and_fold(graph)
    graph.prune()
    graph.verify()
    return Model(graph, name=graph.name, source=None, producer="burnedge.nn")
