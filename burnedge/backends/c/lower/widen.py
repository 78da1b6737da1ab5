"""float16 / bfloat16 for every float32 lowering: widen the step's inputs to float32, run it, round the outputs.

A node whose lowering reads its tensors as float32 (Attention, MatMul, Conv, the reductions...) runs on a float16
or bfloat16 graph through this wrapper: each such tensor gets a float32 buffer at the start of the step's scratch
(constants are widened once, at compile time), the float32 lowering runs over a view of the graph in which those
tensors are float32 and live in those buffers, and its outputs are rounded back to their type (ties to even).
The reference computes these ops the same way (burnedge/ops widens ml_dtypes and float16 values to float32 for
every op that is not elementwise). Lowerings that convert per element themselves (elementwise loops, byte
movement, QuantizeLinear / DequantizeLinear, QLinearMatMul: NATIVE_MODULES) never go through it.

Step scratch::

    [ float32 copy of each widened tensor, 64-byte aligned ][ the float32 lowering's own scratch ]
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np

from ....ir import Graph, Node
from . import Ctx, Lowering, find, storage_ctype
from .storage import load, store

__all__ = ["lower_step", "step_scratch"]

WIDE = ("float16", "bfloat16")
NATIVE_MODULES = {"elementwise", "views", "movement", "gather", "qelementwise", "qlinear_matmul", "control_flow"}
_F32 = np.dtype("float32")


def _wide_names(graph: Graph, node: Node) -> list[str]:
    names = dict.fromkeys(n for n in [*node.inputs, *node.outputs] if n)
    return [n for n in names if graph.values[n].dtype.name in WIDE]


def _needs_widening(lowering: Lowering, graph: Graph, node: Node) -> list[str]:
    if lowering.fn.__module__.rsplit(".", 1)[-1] in NATIVE_MODULES:
        return []
    return _wide_names(graph, node)


def _view(graph: Graph, names: list[str]) -> Graph:
    """`graph` with the tensors `names` float32 (constants converted); the nodes are the same objects."""
    view = copy.copy(graph)
    view.__dict__.pop("_per_graph", None)  # whole-graph decisions are made again over the float32 types
    view.values = dict(graph.values)
    for n in names:
        v = graph.values[n]
        data = None if v.data is None else v.data.astype(np.float32)
        view.values[n] = dataclasses.replace(v, dtype=_F32, data=data)
    return view


def _buffers(graph: Graph, names: list[str]) -> tuple[dict[str, int], int]:
    """Offsets in the step's scratch of each widened run-time tensor's float32 copy, and their total bytes."""
    offsets, at = {}, 0
    for n in names:
        if not graph.values[n].is_const:
            offsets[n] = at
            at += (int(np.prod(graph.values[n].shape, dtype=np.int64)) * 4 + 63) // 64 * 64
    return offsets, at


def step_scratch(graph: Graph, node: Node) -> int:
    """The scratch bytes of `node`'s step: its lowering's, plus the float32 copies when it is widened."""
    lowering = find(node)
    if lowering is None:
        return 0
    names = _needs_widening(lowering, graph, node)
    if not names:
        return lowering.scratch(graph, node) if lowering.scratch is not None else 0
    view = _view(graph, names)
    inner = lowering.scratch(view, node) if lowering.scratch is not None else 0
    return _buffers(graph, names)[1] + inner


class _WideCtx(Ctx):
    """The Ctx the float32 lowering sees: widened tensors are float32, in the step's scratch."""

    def __init__(self, outer: Ctx, view: Graph, offsets: dict[str, int], skip: int):
        super().__init__(dataclasses.replace(outer.plan, graph=view), outer.weights, outer.step, outer.node)
        self.outer, self.buf, self.skip = outer, offsets, skip
        self.weight_bytes, self.packed = outer.weight_bytes, outer.packed

    def tensor(self, name: str, as_type: str | None = None) -> str:
        if name in self.buf:
            return f"(({as_type or 'float'} *)(arena + {self.plan.scratch[self.step][0] + self.buf[name]}))"
        v = self.graph.values[name]
        if v.is_const and name in self.outer.graph.values and self.outer.graph.values[name].dtype != v.dtype:
            return self.pack(f"{name}:f32", v.data)
        return super().tensor(name, as_type)

    def scratch(self, ct: str = "float") -> str:
        self.require(self.step in self.plan.scratch, "the lowering asked for scratch memory it did not declare")
        return f"(({ct} *)(arena + {self.plan.scratch[self.step][0] + self.skip}))"


def lower_step(ctx: Ctx, node: Node) -> str:
    """The C of `node`'s step: its lowering's, widened to float32 around it when its tensors are float16."""
    lowering = find(node)
    graph = ctx.graph
    names = _needs_widening(lowering, graph, node)
    if not names:
        return lowering.fn(ctx, node)
    offsets, total = _buffers(graph, names)
    ctx.require(not offsets or ctx.step in ctx.plan.scratch, "the widened step has no scratch memory")
    base = ctx.plan.scratch[ctx.step][0] if offsets else 0
    inner_ctx = _WideCtx(ctx, _view(graph, names), offsets, total)
    body = lowering.fn(inner_ctx, node)
    ctx.weight_bytes = inner_ctx.weight_bytes
    lines = ["{"]
    for n in [i for i in dict.fromkeys(node.inputs) if i in offsets]:
        dt, size = graph.values[n].dtype, int(np.prod(graph.values[n].shape, dtype=np.int64))
        src = ctx.tensor(n, storage_ctype(dt))
        lines.append(
            f"  {{ float *w = (float *)(arena + {base + offsets[n]}); const {storage_ctype(dt)} *s = {src};"
            f" for (long i = 0; i < {size}; i++) w[i] = {load('s[i]', dt)}; }}"
        )
    lines += ["  " + ln for ln in body.splitlines()]
    for n in [o for o in node.outputs if o in offsets and o in ctx.plan.offsets]:
        dt, size = graph.values[n].dtype, int(np.prod(graph.values[n].shape, dtype=np.int64))
        dst = ctx.tensor(n, storage_ctype(dt))
        lines.append(
            f"  {{ const float *w = (const float *)(arena + {base + offsets[n]}); {storage_ctype(dt)} *d = {dst};"
            f" for (long i = 0; i < {size}; i++) d[i] = {store('w[i]', dt)}; }}"
        )
    lines.append("}")
    return "\n".join(lines)
