"""The compiler: a model and a backend in, a Plan and an executable out. The one place that runs passes and plans.

Steps of `compile(model, backend, options)`:

1. QDQ import, when the backend asks for it (`backend.qdq`) and the graph has Q/DQ pairs: they become int8 ops
   (burnedge.quantize.qdq);
2. the backend's own preparation (`backend.prepare`: the C backend expands ops it lacks into their ONNX
   function bodies), then its pass pipeline (`backend.pipeline`, or `options.pipeline`) on a copy of the graph;
3. `make_plan` with the backend's scratch sizes, so the one arena holds every kernel's scratch memory;
4. `backend.compile(plan, threads)`.

`plan(model, backend, options)` stops after step 3: the exporter turns that plan into a bundle through
`backend.artifacts` and `backend.build`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .backends import Backend, Executable, get
from .errors import BurnedgeError, StaticPlanError, UnsupportedOpError
from .ir import Graph
from .model import Model
from .passes import optimize
from .plan import Plan, make_plan
from .quantize.qdq import has_qdq, import_qdq

__all__ = ["Compiled", "Options", "compile", "plan", "unsupported"]


@dataclass(frozen=True)
class Options:
    """How to compile: `pipeline` and `qdq` replace the backend's own choices when set; `threads` is the cores a
    run uses; `max_threads` (0: the backend's maximum) caps what any run of the plan may use, so its kernels'
    scratch is sized for that many (1: a microcontroller's plan, with the least scratch)."""

    pipeline: Sequence[str] | None = None
    qdq: bool | None = None
    threads: int = 1
    max_threads: int = 0


@dataclass
class Compiled:
    """A plan and what runs it on one backend."""

    plan: Plan
    executable: Executable
    backend: Backend


def _backend(backend: Backend | str) -> Backend:
    return get(backend) if isinstance(backend, str) else backend


def unsupported(graph: Graph, backend: Backend) -> dict[tuple[str, str, int], list[str]]:
    """(domain, op, opset) -> node names of every node `backend` cannot run, with the reason as the first name."""
    missing: dict[tuple[str, str, int], list[str]] = {}
    for node in graph.nodes:
        if backend.supports(node) is not None:
            opset = node.op.since if node.op.domain else graph.opset  # the graph records the default domain's only
            missing.setdefault((node.op.domain, node.op_type, opset), []).append(node.name)
    return missing


def _no_strings(graph: Graph, backend: Backend) -> None:
    """A string has no fixed size, so an arena of numbers cannot hold one: said before any op is looked at."""
    for node in graph.nodes:
        for name in [*node.inputs, *node.outputs]:
            if name and graph.values[name].dtype.kind in "OSU":
                raise StaticPlanError(
                    f"tensor {name!r} of node {node.name!r} ({node.op_type}) holds strings: strings have no fixed "
                    f"size, so the {backend.name} backend's static plan cannot hold them (the numpy backend can)"
                )


def plan(model: Model | Graph, backend: Backend | str, options: Options | None = None) -> Plan:
    """Steps 1-3 of the module docstring: the plan `backend` runs (its ops checked with `backend.supports`)."""
    b, o = _backend(backend), options or Options()
    graph = (model.graph if isinstance(model, Model) else model).copy()
    if not b.strings:
        _no_strings(graph, b)
    if (b.qdq if o.qdq is None else o.qdq) and has_qdq(graph):
        graph = import_qdq(graph)
    graph = optimize(b.prepare(graph), b.pipeline if o.pipeline is None else tuple(o.pipeline))
    missing = unsupported(graph, b)
    if missing:
        raise UnsupportedOpError(missing, backend=b.name)
    graph.threads = o.max_threads
    return make_plan(graph, lambda node: b.scratch(graph, node), reads=b.reads(graph))


def compile(model: Model | Graph, backend: Backend | str, options: Options | None = None) -> Compiled:  # noqa: A001
    """Plans `model` for `backend` and compiles the plan (see the module docstring)."""
    b, o = _backend(backend), options or Options()
    if isinstance(o.threads, bool) or not isinstance(o.threads, int) or o.threads < 1:
        raise BurnedgeError(f"threads must be a whole number >= 1, not {o.threads!r}")
    p = plan(model, b, o)
    return Compiled(p, b.compile(p, threads=o.threads), b)
