"""The backend seam: what every execution path implements, and nothing more.

A backend receives a Plan from burnedge.compiler (the optimised graph in execution order with every tensor's arena
offset) and turns it into something that runs. The compiler asks it two things first: which passes to run
(`pipeline`, `qdq`) and how much scratch memory each step's kernel needs (`scratch`), so that the one arena is
planned for this backend. For bundles it also makes the members (`artifacts`), builds them for a target (`build`)
and loads a bundle back (`load`); `runner` gives the standalone program that emulation runs.

    Backend            compile(plan) -> Executable.run(feeds) -> outputs
                       artifacts(plan) -> Artifacts --build(target)--> Library --(bundle)--> load(bundle) -> Executable

An executable may also run step by step (`run_steps`, with a hook before and after every step, reading tensors
from its arena): the decorator backends checked<x> and profiled<x> (burnedge.backends.wrappers) build on that.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..errors import BurnedgeError
from ..ir import Graph, Node
from ..plan import Plan

__all__ = ["Artifacts", "Backend", "Executable", "Library", "Reader", "StepHook"]

Reader = Callable[[str], np.ndarray]  # a tensor of the plan by name, as the executable holds it now
StepHook = Callable[[int, Reader], None]  # (step index, reader)


class Executable(Protocol):
    """A compiled model: `run` takes validated feeds (by input name) and returns outputs by name."""

    arena_bytes: int

    def run(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]: ...


@dataclass
class Artifacts:
    """What a backend makes of a plan for a bundle, before any target: its members (sources, tables), the weight
    blob (key -> (offset, array); the bundle stores it as weights.safetensors), and what `build` needs."""

    members: dict[str, bytes]
    weights: dict[str, tuple[int, np.ndarray]]
    weight_bytes: int
    payload: Any = field(default=None, repr=False)  # the backend's own build input (the C backend: the C source)


@dataclass
class Library:
    """One target's build: its bundle members and the manifest row that says what a machine needs to load it."""

    members: dict[str, bytes]
    row: dict[str, Any]


class Backend:
    """The protocol, with the defaults a backend that does less inherits. Subclasses set `name`."""

    name: str = ""
    pipeline: tuple[str, ...] = ()  # the passes (burnedge.passes) the compiler runs before planning
    qdq: bool = False  # True: the compiler imports Q/DQ pairs as int8 ops (burnedge.quantize.qdq)
    strings: bool = False  # True: string tensors can be in its plans (the numpy reference); else StaticPlanError

    def unavailable_reason(self) -> str | None:
        """None when the backend can compile here, else why not (a missing compiler, package or device)."""
        return None

    def supports(self, node: Node, graph: Graph | None = None) -> str | None:
        """None when the backend can run `node` (in `graph`, when given: dtypes and attributes count), else why."""
        return None

    def via(self, node: Node) -> str | None:
        """How the backend runs `node`'s op when it has no kernel of its own for it ("via its ONNX function"), else
        None; `burnedge ops` shows it."""
        return None

    def prepare(self, graph: Graph) -> Graph:
        """The graph before the pass pipeline, rewritten into what this backend runs (default: unchanged)."""
        return graph

    def scratch(self, graph: Graph, node: Node) -> int:
        """Bytes of scratch memory the step running `node` needs; the planner places them in the arena."""
        return 0

    def reads(self, graph: Graph) -> dict[int, list[str]]:
        """Step -> tensors its kernel reads besides the node's inputs (default none): the planner keeps them
        alive until then (the OpenCL backend computes a depthwise convolution inside the 1x1 one after it)."""
        return {}

    def compile(self, plan: Plan, threads: int = 1) -> Executable:
        """An executable of `plan` (one that also has `run_steps` serves checked<x> and profiled<x>)."""
        raise NotImplementedError

    def artifacts(self, plan: Plan) -> Artifacts:
        raise BurnedgeError(f"the {self.name} backend writes no bundles")

    def build(self, artifacts: Artifacts, target: Any) -> Library:
        raise BurnedgeError(f"the {self.name} backend builds nothing for targets")

    def load(self, bundle: Any, threads: int = 1) -> Executable:
        raise BurnedgeError(f"the {self.name} backend loads no bundles")

    def runner(self, target: Any) -> Path:
        """The standalone program (no Python) that runs a bundle's job folder on `target` (see burnedge.emulate)."""
        raise BurnedgeError(f"the {self.name} backend has no standalone runner")

    def firmware_sources(self, bundle: Any, target: Any) -> dict[str, bytes]:
        """A bundle's model as microcontroller sources for `target` (model.c / model.h, weights, kernels, the
        target's flags as config.mk and config.cmake; see burnedge.firmware), file name -> bytes."""
        raise BurnedgeError(f"the {self.name} backend makes no firmware")

    def __repr__(self) -> str:
        return f"<backend {self.name}>"
