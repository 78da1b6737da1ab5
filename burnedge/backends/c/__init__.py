"""The C backend: a plan becomes generated C over the kernel library, compiled per target, loaded through cffi.

Plan --emit--> model.c --cc (host or a target's cross compiler)--> model.so --cffi--> CModel.run

The compiler (burnedge.compiler) hands it a Plan made with its pass pipeline and its kernels' scratch sizes; it
never runs passes or the planner itself. Modules: lower/ (one lowering per op family), emit.py (plan -> C),
kernels/ (the kernel library by ISA), build.py (compiling, cached), cross.py (targets' toolchains and library
rows), runtime.py (the loaded library, a pool of arenas), loader.py (a bundle back to a CModel), standalone.py
(the runner program that emulation and boards run without Python).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ...bundle import Bundle
from ...importers.functions import expand_functions, function_of
from ...ir import Graph, Node
from ...passes import DEFAULT_PIPELINE, einsum
from ...plan import Plan
from ...targets import Target
from ..base import Artifacts, Backend, Library
from .build import build_model, build_object, host_toolchain, kernel_sources
from .cross import library_row, toolchain
from .emit import emit, weights_blob
from .firmware import firmware_sources
from .loader import load
from .lower import CTYPES, STORAGE, find
from .lower.control_flow import branch_problem
from .lower.layout import nhwc_int8_tensors, nhwc_tensors
from .lower.widen import step_scratch
from .runtime import CModel, TensorSlot
from .standalone import runner_binary

__all__ = ["BACKEND", "CBackend", "io_slots"]


def io_slots(plan: Plan) -> tuple[list[TensorSlot], list[TensorSlot], dict]:
    g = plan.graph
    ins = [TensorSlot(n, plan.offsets[n], g.values[n].dtype, g.values[n].shape) for n in g.inputs]
    outs = [TensorSlot(n, plan.offsets.get(n), g.values[n].dtype, g.values[n].shape) for n in g.outputs]
    consts = {n: g.values[n].data for n in g.outputs if g.values[n].is_const}
    return ins, outs, consts


class CBackend(Backend):
    name = "c"
    pipeline = DEFAULT_PIPELINE
    qdq = True

    def unavailable_reason(self) -> str | None:
        cc = host_toolchain().cc
        return None if shutil.which(cc) else f"no C compiler {cc!r} (Debian: apt-get install gcc)"

    def supports(self, node: Node, graph: Graph | None = None) -> str | None:
        if node.op.key == "Einsum":  # the pipeline's einsum pass rewrites it into ops C has
            why = einsum.why_not(graph, node) if graph is not None else None
            return f"no C kernel for Einsum (the einsum pass cannot rewrite it: {why})" if why else None
        if find(node) is None:
            if graph is None and self.via(node):  # `prepare` expands it before lowering
                return None
            return f"no C kernel for {node.op.key}"
        why = branch_problem(node)
        if why:
            return why
        if graph is not None:
            for name in [*node.inputs, *node.outputs]:
                if name and graph.values[name].dtype.name not in CTYPES | STORAGE:
                    return f"no C type for {graph.values[name].dtype.name} (tensor {name!r})"
        return None

    def via(self, node: Node) -> str | None:
        return "via its ONNX function" if find(node) is None and function_of(node) else None

    def prepare(self, graph: Graph) -> Graph:
        """Ops without a C kernel whose ONNX schema defines a function body become that body (the reference keeps
        the op); what the body cannot cover is reported by `supports` as any missing op."""
        return expand_functions(graph, lambda node: node.op.key != "Einsum" and find(node) is None)

    def scratch(self, graph: Graph, node: Node) -> int:
        return step_scratch(graph, node)

    def compile(self, plan: Plan, threads: int = 1) -> CModel:
        emitted = emit(plan, plan.graph.name)  # every C build can run step by step
        ins, outs, consts = io_slots(plan)
        g = plan.graph
        last = nhwc_tensors(g) | nhwc_int8_tensors(g)
        tensors = {
            n: TensorSlot(n, off, g.values[n].dtype, g.values[n].shape, n in last) for n, off in plan.offsets.items()
        }
        model = CModel(build_model(emitted.source), weights_blob(emitted), ins, outs, consts, threads, tensors)
        model.plan = plan
        return model

    def artifacts(self, plan: Plan) -> Artifacts:
        emitted = emit(plan, plan.graph.name)
        members = {"src/model.c": emitted.source.encode()}
        members.update({f"src/kernels/{n}": text.encode() for n, text in kernel_sources().items()})
        return Artifacts(members, emitted.weights, emitted.weight_bytes, payload=emitted.source)

    def build(self, artifacts: Artifacts, target: Target) -> Library:
        if target.os == "baremetal":  # the model compiled for the core; `firmware` links it with its kernels
            path = f"lib/{target.name}/model.o"
            return Library(
                {path: build_object(artifacts.payload, toolchain(target)).read_bytes()}, library_row(target, path)
            )
        path = f"lib/{target.name}/model.so"
        so = build_model(artifacts.payload, toolchain(target)).read_bytes()
        return Library({path: so}, library_row(target, path))

    def load(self, bundle: Bundle, threads: int = 1) -> CModel:
        return load(bundle, threads)

    def runner(self, target: Target) -> Path:
        return runner_binary(target)

    def firmware_sources(self, bundle: Bundle, target: Target) -> dict[str, bytes]:
        return firmware_sources(bundle, target)


BACKEND = CBackend()
