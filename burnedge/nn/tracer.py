"""Tracer: records the ONNX nodes a module's `forward` makes into a Graph, naming them by module path.

Node names are ``<module path>/<op>`` (``features.3/Conv``; a repeat gets ``_1``, ``_2``...), outputs
``<node>_output_<i>``; weights are initializers named by their PyTorch names (``features.3.weight``) and other
constants ``<module path>/const_<n>``. Each node's output types are inferred as it is made (the registry's infer,
or its reference on zeros), so a traced tensor's shape is known at once and a bad shape is an error right there,
naming the module path: ``features.3 (Conv2d): ...``.

A layer or function adds nodes through the active tracer (``burnedge.nn._state.current()``): ``op(op_type,
*inputs, n_out=1, **attrs)`` (inputs are tensors, Parameters, numbers or arrays; None is an omitted optional
input), ``lift(x, dtype)``, ``const(array)``, ``ints([...])`` for int64 shape/axes operands, and ``error(msg)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .. import dtypes
from ..errors import BurnedgeError, TraceError
from ..ir import Node, Spec, Value
from ..ops import for_onnx
from ..ops.interpreter import evaluate
from .tensor import Stored, Tensor

__all__ = ["OPSET", "Tracer"]

OPSET = 21  # the ONNX opset traced graphs use (GroupNormalization-21, Gelu-20, axes as inputs)


class Tracer:
    """One trace: the values, nodes and inputs of the graph being built, and the module scope being run."""

    def __init__(self, weights: dict[int, str], paths: dict[int, str]):
        self.weights = weights  # id(Parameter or Buffer) -> its state-dict name
        self.paths = paths  # id(Module) -> its path from the root ("" for the root)
        self.values: dict[str, Value] = {}
        self.nodes: list[Node] = []
        self.inputs: list[str] = []
        self._lifted: dict[int, Tensor] = {}
        self._counts: dict[str, int] = {}
        self._scope: list[tuple[str, str]] = []  # (path, class name) of the modules being run

    # -- where we are ---------------------------------------------------------------------------------------
    @contextmanager
    def scope(self, module: Any) -> Iterator[None]:
        """Runs the block as `module` (its path names the nodes it makes and the errors it raises)."""
        path = self.paths.get(id(module))
        if path is None:  # a module made inside forward, or kept outside the module tree
            parent = self._scope[-1][0] if self._scope else ""
            path = f"{parent}.{type(module).__name__}" if parent else type(module).__name__
        self._scope.append((path, type(module).__name__))
        try:
            yield
        finally:
            self._scope.pop()

    def where(self) -> str:
        if not self._scope:
            return "trace"
        path, cls = self._scope[-1]
        return f"{path} ({cls})" if path else cls

    def error(self, message: str) -> TraceError:
        """A TraceError naming the module being run: ``features.3 (Conv2d): <message>``."""
        return TraceError(f"{self.where()}: {message}")

    def axis(self, dim: int, rank: int) -> int:
        """`dim` as a non-negative axis of a rank-`rank` tensor (torch's negative dims count from the end)."""
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
            raise self.error(f"a dim must be an int, not {dim!r}")
        if not -rank <= dim < max(rank, 1):
            raise self.error(f"dim {dim} is out of range for a tensor of {rank} dims")
        return int(dim) % max(rank, 1)

    def _unique(self, base: str) -> str:
        n = self._counts.get(base, 0)
        self._counts[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    # -- values ---------------------------------------------------------------------------------------------
    def is_tensor(self, x: Any) -> bool:
        return isinstance(x, Tensor)

    def input(self, name: str, shape: tuple[int, ...], dtype: np.dtype) -> Tensor:
        self.values[name] = Value(name, np.dtype(dtype), tuple(shape))
        self.inputs.append(name)
        return Tensor(self, name, tuple(shape), np.dtype(dtype))

    def const(self, array: Any) -> Tensor:
        arr = np.ascontiguousarray(array)
        prefix = self._scope[-1][0] if self._scope and self._scope[-1][0] else "root"
        name = self._unique(f"{prefix}/const")
        self.values[name] = Value(name, arr.dtype, arr.shape, arr)
        return Tensor(self, name, arr.shape, arr.dtype, arr)

    def ints(self, values: list[int]) -> Tensor:
        return self.const(np.asarray(values, np.int64))

    def lift(self, x: Any, dtype: Any = None) -> Tensor:
        """`x` as a traced tensor (cast to `dtype` when given): a Tensor as is, a Parameter or Buffer as its
        initializer, a number or array as a constant."""
        if isinstance(x, Stored):
            x = self._weight(x)
        if isinstance(x, Tensor):
            if x._tracer is not self:
                raise self.error(f"tensor {x.name!r} comes from another trace")
            if dtype is not None and x.dtype != np.dtype(dtype):
                return self.op("Cast", x, to=dtypes.to_onnx(np.dtype(dtype)))
            return x
        arr = np.asarray(x)
        if dtype is not None:
            arr = arr.astype(dtype)
        elif arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        if arr.dtype == object or arr.dtype.kind not in "biuf":
            raise self.error(f"cannot use {type(x).__name__} {x!r} as a tensor")
        return self.const(arr)

    def _weight(self, w: Stored) -> Tensor:
        if id(w) in self._lifted:
            return self._lifted[id(w)]
        name = self.weights.get(id(w))
        if name is None:
            raise self.error(
                f"a {type(w).__name__} {list(w.shape)} that is not part of the traced module (assign it to an "
                "attribute of a Module, or register_buffer it, so that it has a name)"
            )
        arr = np.ascontiguousarray(w.data)
        self.values[name] = Value(name, arr.dtype, arr.shape, arr)
        t = self._lifted[id(w)] = Tensor(self, name, arr.shape, arr.dtype, arr)
        return t

    # -- nodes ----------------------------------------------------------------------------------------------
    def op(self, op_type: str, *inputs: Any, n_out: int = 1, domain: str = "", **attrs: Any) -> Any:
        """Adds one node of registry op `op_type` (inputs lifted; None is an omitted optional input) and returns
        its output tensor, or the list of them when `n_out` > 1."""
        opdef = for_onnx(op_type, OPSET, domain)
        if opdef is None:
            raise self.error(f"burnedge has no {op_type} at opset {OPSET}")
        unknown = sorted(set(attrs) - set(opdef.attrs))
        if unknown:
            raise self.error(f"{op_type} takes no attribute(s) {unknown}; it takes {sorted(opdef.attrs)}")
        ins = [None if x is None else self.lift(x) for x in inputs]
        prefix = self._scope[-1][0] if self._scope and self._scope[-1][0] else ""
        name = self._unique(f"{prefix}/{op_type}" if prefix else op_type)
        outs = [f"{name}_output_{i}" for i in range(n_out)]
        node = Node(opdef, name, ["" if t is None else t.name for t in ins], outs, attrs)
        try:
            if all(t is None or t.const is not None for t in ins) and not opdef.random:
                results = evaluate(node, [None if t is None else t.const for t in ins])
                specs = [(r.shape, r.dtype, r) for r in results]
            elif opdef.infer is not None:
                args = [
                    None if t is None else (t.const if t.const is not None else Spec(t.shape, t.dtype)) for t in ins
                ]
                specs = [(s.shape, np.dtype(s.dtype), None) for s in opdef.infer(*args, **attrs)]
            else:
                args = [
                    None if t is None else (t.const if t.const is not None else np.zeros(t.shape, t.dtype)) for t in ins
                ]
                specs = [(r.shape, r.dtype, None) for r in evaluate(node, args)]
        except Exception as exc:  # the reference or infer function rejecting the shapes: say where and why
            cause = exc.__cause__ if isinstance(exc, BurnedgeError) and exc.__cause__ is not None else exc
            shapes = ", ".join("-" if t is None else str(list(t.shape)) for t in ins)
            raise self.error(f"{op_type} on inputs {shapes} failed: {str(cause).strip()}") from None
        self.nodes.append(node)
        results = []
        for out, (shape, dtype, data) in zip(outs, specs):
            shape = tuple(int(d) for d in shape)
            self.values[out] = Value(out, np.dtype(dtype), shape)
            results.append(Tensor(self, out, shape, np.dtype(dtype), data))
        return results[0] if n_out == 1 else results
