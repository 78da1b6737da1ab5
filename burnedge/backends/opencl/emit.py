"""Plan -> one OpenCL program: a kernel (or a few) per step, with constant shapes and arena offsets baked in.

A kernel generator looks like this::

    @kernel("Relu")
    def relu(ctx: Ctx, node: Node) -> None:
        n = ctx.size(node.outputs[0])
        ctx.launch(f"if (i < {n}) {ctx.ptr(node.outputs[0])}[i] = max({ctx.ptr(node.inputs[0])}[i], 0.0f);", n)

- `ctx.ptr(name)` is a typed pointer expression: into the arena (``A``) at the tensor's planned offset, or into
  the weights (``W``) for a constant, which `ctx` adds to the weight blob;
- `ctx.launch(body, global, local)` adds one kernel ``k<step>_<j>(global uchar *A, global const uchar *W)`` whose
  body sees ``i`` (the global id 0) and ``gid1``/``gid2`` when the range has more dimensions; a body that names
  ``KERNEL_NAME`` is taken whole (the tiled GEMM writes its own signature, attributes and helpers);
- `ctx.require(ok, reason)` rejects a node with an error naming it.

Every kernel takes the same two buffers, so the runtime sets the arguments once and a run only enqueues.
Generators are found by directory convention: every ``ops_*.py`` module of this package registers its own.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import BurnedgeError
from ...ir import Graph, Node
from ...plan import Plan
from .gemm import CONFIGS, Config, gemm_source, heuristic, reduce_source, split_k

__all__ = ["CLTYPES", "Ctx", "Emitted", "Launch", "OpenCLError", "cltype", "emit", "find", "kernel", "supported"]

CLTYPES = {
    "float32": "float",
    "int8": "char",
    "uint8": "uchar",
    "int16": "short",
    "uint16": "ushort",
    "int32": "int",
    "uint32": "uint",
    "int64": "long",
    "uint64": "ulong",
    "bool": "uchar",
}

PRELUDE = """\
#define be_max(a, b) (isnan(a) || isnan(b) ? (a) + (b) : ((a) > (b) ? (a) : (b)))
#define be_min(a, b) (isnan(a) || isnan(b) ? (a) + (b) : ((a) < (b) ? (a) : (b)))
#define be_clamp01(a) (isnan(a) ? (a) : ((a) < 0.0f ? 0.0f : ((a) > 1.0f ? 1.0f : (a))))
"""


TUNE_FLOPS = 2_000_000  # smaller GEMMs are all launch cost: the heuristic's guess, nothing measured


class OpenCLError(BurnedgeError):
    """A node the OpenCL backend cannot run, or an OpenCL platform / build problem."""


def cltype(dtype: Any) -> str:
    name = np.dtype(dtype).name
    if name not in CLTYPES:
        raise OpenCLError(f"the OpenCL backend has no type for {name}")
    return CLTYPES[name]


@dataclass(frozen=True)
class Launch:
    """One enqueue of a run: the kernel's name, its global and local ranges, and the plan step it belongs to.
    A `step_only` launch computes a tensor that a later kernel recomputes where it reads it (ops_dense's inlined
    depthwise): a run skips it, a run step by step (checked<opencl>) keeps it, so every step's output is there."""

    kernel: str
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None
    step: int
    step_only: bool = False

    def to_json(self) -> dict[str, Any]:
        d = {"kernel": self.kernel, "global": list(self.global_size), "local": self.local_size, "step": self.step}
        return {**d, "step_only": True} if self.step_only else d

    @staticmethod
    def from_json(d: dict[str, Any]) -> Launch:
        local = tuple(d["local"]) if d["local"] is not None else None
        return Launch(d["kernel"], tuple(d["global"]), local, int(d["step"]), bool(d.get("step_only", False)))


@dataclass
class Emitted:
    """The program source, its launches in run order, and the weight blob (key -> (offset, array))."""

    source: str
    launches: list[Launch]
    weights: dict[str, tuple[int, np.ndarray]]
    weight_bytes: int
    tuning: dict[str, str] = field(default_factory=dict)  # problem key -> chosen GEMM configuration
    flops: int = 0


Generator = Callable[["Ctx", Node], None]
_GENERATORS: dict[tuple[str, str], Generator] = {}
_loaded = False


def kernel(*names: str, domain: str = "") -> Callable[[Generator], Generator]:
    """Decorator: registers a kernel generator for the ONNX (or burnedge-domain) ops `names`, every opset."""

    def deco(fn: Generator) -> Generator:
        for name in names:
            if (domain, name) in _GENERATORS:
                raise RuntimeError(f"two OpenCL kernels for {domain + '.' if domain else ''}{name}")
            _GENERATORS[(domain, name)] = fn
        return fn

    return deco


def _load_all() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
            if info.name.startswith("ops_"):
                importlib.import_module(f"{__package__}.{info.name}")


def find(node: Node) -> Generator | None:
    """The kernel generator of `node`'s op, or None when the OpenCL backend has none."""
    _load_all()
    return _GENERATORS.get((node.op.domain, node.op.name))


def supported() -> set[tuple[str, str]]:
    """(domain, op name) of every op the OpenCL backend generates kernels for."""
    _load_all()
    return set(_GENERATORS)


@dataclass
class Ctx:
    """What a generator sees: the plan, the step, where tensors live, and the device facts it may tune for."""

    plan: Plan
    weights: dict[str, tuple[int, np.ndarray]] = field(default_factory=dict)
    weight_bytes: int = 0
    step: int = 0
    node: Node | None = None
    kernels: list[str] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    choose: Callable[[str, dict, int], str] | None = None  # tuner: (problem, {name: variant}, weight bytes) -> name
    tuning: dict[str, str] = field(default_factory=dict)
    fp16: bool = False
    compute_units: int = 16  # the device's, for the GEMM heuristic
    flops: int = 0  # multiply-adds x 2 of the GEMMs and convolutions: what a run computes
    local_1d: int = 128  # work-group size of the one-dimensional kernels
    inlined: dict[str, Node] = field(default_factory=dict)  # tensor -> the node its reader computes it with
    step_only: bool = False  # this step's launches are skipped by a run (its output is inlined where read)

    @property
    def graph(self) -> Graph:
        return self.plan.graph

    def require(self, ok: bool, reason: str) -> None:
        if not ok:
            node = self.node
            where = f"node {node.name!r} ({node.op_type})" if node else "a node"
            raise OpenCLError(f"OpenCL backend cannot run {where}: {reason}")

    def shape(self, name: str) -> tuple[int, ...]:
        return self.graph.values[name].shape

    def dtype(self, name: str) -> np.dtype:
        return self.graph.values[name].dtype

    def size(self, name: str) -> int:
        return int(np.prod(self.shape(name), dtype=np.int64))

    def const(self, name: str) -> np.ndarray | None:
        return self.graph.values[name].data if name else None

    def _add_weight(self, key: str, arr: np.ndarray) -> int:
        if key not in self.weights:
            arr = np.ascontiguousarray(arr)
            self.weights[key] = (self.weight_bytes, arr)
            self.weight_bytes += max(64, (arr.nbytes + 63) // 64 * 64)
        return self.weights[key][0]

    def ptr(self, name: str, as_type: str | None = None) -> str:
        """A typed global pointer expression to tensor `name` (arena for activations, weights for constants)."""
        v = self.graph.values[name]
        ct = as_type or cltype(v.dtype)
        if v.is_const:
            data = v.data if v.dtype != np.bool_ else v.data.astype(np.uint8)
            return f"((__global const {ct} *)(W + {self._add_weight(name, data)}))"
        self.require(name in self.plan.offsets, f"tensor {name!r} has no place in the arena")
        return f"((__global {ct} *)(A + {self.plan.offsets[name]}))"

    def pack(self, key: str, arr: np.ndarray) -> str:
        """Adds a derived constant (repacked weights) and returns its typed pointer."""
        return f"((__global const {cltype(arr.dtype)} *)(W + {self._add_weight(key, arr)}))"

    def gemm(self, m: int, n: int, k: int, z: int, helpers: str, tag: str = "") -> None:
        """Adds the tiled GEMM of an M x N x K problem (z of them) over `helpers` (gemm.py), its tile shape
        chosen by the tuner for this problem; split over K (a second kernel sums the slices) when the plan gave
        the step scratch for it (the backend's `scratch` asks gemm.split_k with the same device facts). `tag`
        tells apart tuning keys of one shape whose loaders cost differently (an inlined depthwise)."""
        self.flops += 2 * m * n * k * z
        split = split_k(m, n, k, z, self.compute_units)
        room = self.plan.scratch.get(self.step, (0, 0))[1] if self.plan is not None else 0
        if split > 1 and room >= split * m * n * z * 4:
            partial = f"((__global float *)(A + {self.plan.scratch[self.step][0]}))"
            names = heuristic(m, n, z * split, self.compute_units)
            key = f"gemm:{m}x{n}x{k}x{z}/{split}{tag}"
            pick = self._pick(key, names, m, n, k, z, helpers, split, partial)
            self.launch(*self.gemm_variant(CONFIGS[pick], m, n, k, z, helpers, split, partial))
            self.launch(reduce_source(m, n, z, split, helpers, partial), z * m * n, (self.local_1d,))
            return
        names = heuristic(m, n, z, self.compute_units)
        key = f"gemm:{m}x{n}x{k}x{z}{tag}"
        pick = self._pick(key, names, m, n, k, z, helpers)
        src, gs, local = self.gemm_variant(CONFIGS[pick], m, n, k, z, helpers)
        self.launch(src, gs, local)

    def _pick(self, key, names, m, n, k, z, helpers, split=1, partial="") -> str:
        """The tile shape of problem `key`: the tuning table's, else the tuner's measurement (tiny problems, all
        launch cost, take the heuristic's first guess), else that guess."""
        pick = self.tuning.get(key)
        if pick not in CONFIGS:
            pick = names[0]
            if self.choose is not None and 2 * m * n * k * z >= TUNE_FLOPS:
                variants = {c: self.gemm_variant(CONFIGS[c], m, n, k, z, helpers, split, partial) for c in names}
                pick = self.choose(key, variants, self.weight_bytes)
                self.tuning[key] = pick
        return pick

    @staticmethod
    def gemm_variant(cfg: Config, m: int, n: int, k: int, z: int, helpers: str, split: int = 1, partial: str = ""):
        """(source, global size, local size) of one tile shape (with `split`: z x split work-group layers)."""
        if split > 1:
            return gemm_source(cfg, m, n, k, helpers, split, partial), cfg.global_size(m, n, z * split), cfg.local
        return gemm_source(cfg, m, n, k, helpers), cfg.global_size(m, n, z), cfg.local

    def name(self) -> str:
        return f"k{self.step}_{sum(1 for x in self.launches if x.step == self.step)}"

    def launch(self, body: str, global_size: int | tuple[int, ...], local: tuple[int, ...] | None = None) -> None:
        """Adds a kernel running `body` over `global_size` work items (rounded up to `local`, default 64 in 1-D:
        the body guards its own range)."""
        gs = (global_size,) if isinstance(global_size, int) else tuple(global_size)
        if gs and min(gs) <= 0:
            return
        if local is None and len(gs) == 1:
            local = (64,)
        if local is not None:
            gs = tuple(-(-g // lc) * lc for g, lc in zip(gs, local))
        name = self.name()
        if "KERNEL_NAME" in body:
            src = body.replace("KERNEL_NAME", name)
        else:
            ids = ["const long i = get_global_id(0);"] + [f"const long gid{d} = get_global_id({d});" for d in (1, 2)]
            src = (
                f"__kernel void {name}(__global uchar *A, __global const uchar *W) {{\n  "
                + "\n  ".join(ids[: len(gs)])
                + f"\n  {body}\n}}"
            )
        self.kernels.append(f"/* step {self.step}: {self.node.op_type if self.node else ''} */\n{src}")
        self.launches.append(Launch(name, gs, local, self.step, self.step_only))


def emit(
    plan: Plan,
    choose: Callable[[str, dict, int], str] | None = None,
    tuning: dict[str, str] | None = None,
    compute_units: int = 16,
    inlined: dict[str, Node] | None = None,
) -> Emitted:
    """The program of `plan`: every step's kernels, the weights they read, the launches in order. `choose` picks
    a GEMM tile shape among measured variants (tune.py); `tuning` holds the choices already made; `inlined` names
    tensors a run computes where they are read, with the node that makes them (their own step is step-only)."""
    ctx = Ctx(plan, choose=choose, tuning=dict(tuning or {}), compute_units=compute_units)
    ctx.inlined = dict(inlined or {})
    for i, node in enumerate(plan.graph.nodes):
        gen = find(node)
        if gen is None:
            raise OpenCLError(f"OpenCL backend cannot run node {node.name!r} ({node.op_type}): no kernel for it")
        ctx.step, ctx.node = i, node
        ctx.step_only = any(o in ctx.inlined for o in node.outputs if o)
        gen(ctx, node)
    source = PRELUDE + "\n\n".join(ctx.kernels) + "\n"
    return Emitted(source, ctx.launches, ctx.weights, ctx.weight_bytes, ctx.tuning, ctx.flops)


def weights_blob(weights: dict[str, tuple[int, np.ndarray]], size: int) -> np.ndarray:
    """The weights as one byte array at their offsets (what is uploaded once per context)."""
    blob = np.zeros(max(size, 64), np.uint8)
    for off, arr in weights.values():
        b = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
        blob[off : off + b.size] = b
    return blob
