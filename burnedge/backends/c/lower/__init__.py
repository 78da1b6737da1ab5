"""Lowering registry of the C backend: one Python function per op that turns a plan step into C statements.

A lowering looks like this::

    @lower("Relu")
    def relu(ctx: Ctx, node: Node) -> str:
        n = ctx.size(node.outputs[0])
        return f"be_relu_f32({ctx.tensor(node.inputs[0])}, {ctx.tensor(node.outputs[0])}, {n});"

- it returns C statements with constant shapes, reading inputs and writing outputs through `ctx.tensor(name)`
  (an arena pointer for activations, a weights pointer for constants);
- `ctx.pack(key, array)` adds a derived constant (repacked weights, a folded table) and returns its pointer;
- `scratch=` gives the bytes of scratch memory a step needs (``ctx.scratch()`` points at them); the planner
  places it in the arena for that step only;
- `ctx.require(reason)` rejects a node this lowering cannot run (an unsupported dtype or attribute): the error
  names the node, the op and the reason;
- kernels live in ``kernels/*.c`` (declared in ``kernels/burnedge.h``), compiled once into a static library.

Lowerings are found by directory convention: every module of this package registers its own.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ....errors import BurnedgeError
from ....ir import Graph, Node
from ....plan import Plan
from .storage import STORAGE

__all__ = [
    "CTYPES", "Ctx", "LowerError", "Lowering", "STORAGE", "ctype", "find", "label", "lower", "step_scratch",
    "storage_ctype", "supported",
]  # fmt: skip

CTYPES = {
    "float32": "float",
    "float64": "double",
    "int8": "int8_t",
    "uint8": "uint8_t",
    "int16": "int16_t",
    "uint16": "uint16_t",
    "int32": "int32_t",
    "uint32": "uint32_t",
    "int64": "int64_t",
    "uint64": "uint64_t",
    "bool": "uint8_t",
}


class LowerError(BurnedgeError):
    """A node the C backend cannot lower (an op without a kernel, an unsupported dtype or attribute)."""


def ctype(dtype: Any) -> str:
    name = np.dtype(dtype).name
    if name not in CTYPES:
        raise LowerError(f"the C backend has no type for {name}")
    return CTYPES[name]


def storage_ctype(dtype: Any) -> str:
    """The C type an element of `dtype` is stored in: `ctype`, or the bits of a type computed wider (storage.py).

    Only lowerings that convert such values (elementwise loops, byte movement) ask for it; every other lowering
    keeps `ctype`, which refuses float16, float8, int4... with a clear error instead of misreading their bits.
    """
    name = np.dtype(dtype).name
    return STORAGE[name] if name in STORAGE else ctype(dtype)


@dataclass(frozen=True)
class Lowering:
    fn: Callable[[Ctx, Node], str]
    scratch: Callable[[Graph, Node], int] | None = None


_LOWERINGS: dict[tuple[str, str], Lowering] = {}
_loaded = False


def lower(*names: str, domain: str = "", scratch: Callable[[Graph, Node], int] | None = None):
    """Decorator: registers a lowering for the ONNX (or burnedge-domain) ops `names`, every opset version."""

    def deco(fn: Callable[[Ctx, Node], str]) -> Callable[[Ctx, Node], str]:
        for name in names:
            if (domain, name) in _LOWERINGS:
                raise RuntimeError(f"two C lowerings for {domain + '.' if domain else ''}{name}")
            _LOWERINGS[(domain, name)] = Lowering(fn, scratch)
        return fn

    return deco


def per_graph(fn: Callable[[Graph], frozenset[str]]) -> Callable[[Graph], frozenset[str]]:
    """`fn(graph)` computed once while the graph's structure stays the same: a whole-graph decision (which tensors
    are stored channels-last) is asked by the scratch callback and the lowering of every node, and rescanning the
    graph each time made compiling quadratic in its size. The answer is kept on the graph with the structure it
    was computed for (every node, its inputs and outputs, and the graph outputs); a changed graph recomputes."""

    @functools.wraps(fn)
    def cached(graph: Graph) -> frozenset[str]:
        key = (tuple((id(n), *n.inputs, None, *n.outputs) for n in graph.nodes), tuple(graph.outputs))
        memo = graph.__dict__.setdefault("_per_graph", {})
        hit = memo.get(fn.__qualname__)
        if hit is not None and hit[0] == key:
            return hit[1]
        out = frozenset(fn(graph))
        memo[fn.__qualname__] = (key, out)
        return out

    return cached


def _load_all() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for info in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{info.name}")


def find(node: Node) -> Lowering | None:
    """The lowering of `node`'s op, or None when the C backend has no kernel for it."""
    _load_all()
    return _LOWERINGS.get((node.op.domain, node.op.name))


def step_scratch(graph: Graph, node: Node) -> int:
    """The scratch bytes the lowering of `node` asks for (0 without a lowering or a scratch function)."""
    lowering = find(node)
    return lowering.scratch(graph, node) if lowering is not None and lowering.scratch is not None else 0


def label(node: Node) -> str:
    """A step's comment in the generated C: the ONNX ops it computes and its node name."""
    ops = "+".join(op for op, _ in node.onnx_ops)
    return f"{ops} {node.name!r}".replace("*/", "* /")


def supported() -> set[tuple[str, str]]:
    """(domain, op name) of every op the C backend can lower."""
    _load_all()
    return set(_LOWERINGS)


@dataclass
class Ctx:
    """What a lowering sees: the plan, the step being lowered, and where every tensor lives."""

    plan: Plan
    weights: dict[str, tuple[int, np.ndarray]]  # constant name -> (offset in the weights blob, array)
    step: int = 0
    node: Node | None = None
    weight_bytes: int = 0
    packed: dict[str, str] = field(default_factory=dict)
    functions: list[str] = field(default_factory=list)  # file-scope C the steps call (parallel loop bodies)

    def task(self, body: list[str]) -> str:
        """Adds a parallel loop's body as a file-scope function `(ctx, tid, lo, hi)` over `arena` and `weights`
        (be_parallel's task, kernels/workers.h); returns its name."""
        name = f"be_task_{self.step}_{len(self.functions)}"
        self.functions += [
            f"static void {name}(void *ctx, int tid, long lo, long hi) {{",
            "  uint8_t *arena = ((be_step_args *)ctx)->arena;",
            "  const uint8_t *weights = ((be_step_args *)ctx)->weights;",
            "  (void)arena; (void)weights; (void)tid;",
            *("  " + line for line in body),
            "}",
        ]
        return name

    @property
    def graph(self) -> Graph:
        return self.plan.graph

    def require(self, ok: bool, reason: str) -> None:
        if not ok:
            node = self.node
            where = f"node {node.name!r} ({node.op_type})" if node else "a node"
            raise LowerError(f"C backend cannot run {where}: {reason}")

    def shape(self, name: str) -> tuple[int, ...]:
        return self.graph.values[name].shape

    def dtype(self, name: str) -> np.dtype:
        return self.graph.values[name].dtype

    def size(self, name: str) -> int:
        return int(np.prod(self.shape(name), dtype=np.int64))

    def const(self, name: str) -> np.ndarray | None:
        """The value of a constant input (attributes-as-inputs: axes, pads, scales), None for activations."""
        return self.graph.values[name].data if name else None

    def _add_weight(self, key: str, arr: np.ndarray) -> int:
        if key not in self.weights:
            arr = np.ascontiguousarray(arr)
            self.weights[key] = (self.weight_bytes, arr)
            self.weight_bytes += (arr.nbytes + 63) // 64 * 64
        return self.weights[key][0]

    def tensor(self, name: str, as_type: str | None = None) -> str:
        """A C pointer expression to tensor `name`, typed by its dtype (or `as_type`)."""
        v = self.graph.values[name]
        ct = as_type or ctype(v.dtype)
        if v.is_const:
            return f"((const {ct} *)(weights + {self._add_weight(name, v.data)}))"
        self.require(name in self.plan.offsets, f"tensor {name!r} of dtype {v.dtype} has no place in the arena")
        return f"(({ct} *)(arena + {self.plan.offsets[name]}))"

    def pack(self, key: str, arr: np.ndarray) -> str:
        """Adds a derived constant (e.g. weights repacked for a kernel) and returns its typed pointer."""
        return f"((const {ctype(arr.dtype)} *)(weights + {self._add_weight(key, arr)}))"

    def scratch(self, ct: str = "float") -> str:
        self.require(self.step in self.plan.scratch, "the lowering asked for scratch memory it did not declare")
        return f"(({ct} *)(arena + {self.plan.scratch[self.step][0]}))"
