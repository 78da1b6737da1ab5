"""The C backend: passes, a static plan, generated C over a portable kernel library, loaded through cffi.

graph --optimize--> graph --make_plan--> Plan --emit--> model.c --cc--> model.so --cffi--> CModel.run
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence

from ...ir import Graph, Node
from ...passes import DEFAULT_PIPELINE, optimize
from ...plan import Plan, make_plan
from .build import build_model, host_toolchain
from .emit import Emitted, emit, weights_blob
from .lower import find
from .runtime import CModel, TensorSlot

__all__ = ["BACKEND", "CBackend", "prepare"]


def prepare(graph: Graph, pipeline: Sequence[str] = DEFAULT_PIPELINE) -> tuple[Plan, Emitted]:
    """Optimises a copy of `graph` with `pipeline`, plans it with each kernel's scratch, and emits its C source."""
    g = optimize(graph.copy(), pipeline)

    def scratch(node: Node) -> int:
        lowering = find(node)
        return lowering.scratch(g, node) if lowering is not None and lowering.scratch is not None else 0

    plan = make_plan(g, scratch)
    return plan, emit(plan, g.name)


def slots(plan: Plan) -> tuple[list[TensorSlot], list[TensorSlot], dict]:
    g = plan.graph
    ins = [TensorSlot(n, plan.offsets[n], g.values[n].dtype, g.values[n].shape) for n in g.inputs]
    outs = [TensorSlot(n, plan.offsets.get(n), g.values[n].dtype, g.values[n].shape) for n in g.outputs]
    consts = {n: g.values[n].data for n in g.outputs if g.values[n].is_const}
    return ins, outs, consts


class CBackend:
    name = "c"

    def unavailable_reason(self) -> str | None:
        cc = host_toolchain().cc
        return None if shutil.which(cc) else f"no C compiler {cc!r} (Debian: apt-get install gcc)"

    def compile(self, graph: Graph, threads: int = 1) -> CModel:
        plan, emitted = prepare(graph)
        library = build_model(emitted.source)
        ins, outs, consts = slots(plan)
        model = CModel(library, weights_blob(emitted), ins, outs, consts, threads)
        model.plan = plan
        return model


BACKEND = CBackend()
