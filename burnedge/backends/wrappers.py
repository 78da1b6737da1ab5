"""Decorator backends, as Burn composes its backends: each wraps another and keeps its plan, its kernels and its
bundles, adding one thing.

- `checked<x>` runs every step on x and, on the same inputs (read from x's arena before the step), on the numpy
  reference; the first step whose output differs beyond the contract (floats: 1e-4 of the largest |reference|;
  integers, booleans and int8: exactly) stops the run with a CheckError naming the step, its ONNX nodes and the
  error.
- `profiled<x>` times every step (in C for the C backend: no Python between steps) and keeps the times of every
  run; `profile()` gives each step's median and share of the whole.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import BurnedgeError
from ..feeds import compare
from ..ir import Graph, Node
from ..ops.interpreter import evaluate
from ..plan import Plan
from .base import Artifacts, Backend, Executable, Library

__all__ = ["WRAPPERS", "CheckError", "Checked", "Profiled", "StepTime"]


class CheckError(BurnedgeError):
    """A step of a checked backend gave an output the numpy reference does not."""

    def __init__(self, message: str, step: int, node: Node, output: str, max_abs: float, relative: float):
        self.step, self.node, self.output, self.max_abs, self.relative = step, node, output, max_abs, relative
        super().__init__(message)


class _Wrapper(Backend):
    """Delegates everything to `inner`; subclasses change `compile` (and what it returns)."""

    kind = ""

    def __init__(self, inner: Backend):
        self.inner = inner
        self.name = f"{self.kind}<{inner.name}>"
        self.pipeline, self.qdq, self.strings = inner.pipeline, inner.qdq, inner.strings

    def unavailable_reason(self) -> str | None:
        return self.inner.unavailable_reason()

    def supports(self, node: Node, graph: Graph | None = None) -> str | None:
        return self.inner.supports(node, graph)

    def scratch(self, graph: Graph, node: Node) -> int:
        return self.inner.scratch(graph, node)

    def reads(self, graph: Graph) -> dict[int, list[str]]:
        return self.inner.reads(graph)

    def artifacts(self, plan: Plan) -> Artifacts:
        return self.inner.artifacts(plan)

    def build(self, artifacts: Artifacts, target: Any) -> Library:
        return self.inner.build(artifacts, target)

    def runner(self, target: Any):
        return self.inner.runner(target)


# -- checked ------------------------------------------------------------------------------------------------------
class CheckedExecutable:
    """Runs `inner` step by step next to the numpy reference of the same plan (see the module docstring)."""

    def __init__(self, inner: Any, plan: Plan, tolerance: float = 1e-4):
        if not hasattr(inner, "run_steps"):
            raise BurnedgeError(f"checked: {type(inner).__name__} cannot run step by step")
        self.inner, self.plan, self.tolerance = inner, plan, tolerance
        self.arena_bytes = inner.arena_bytes
        self.steps_checked = 0

    def close(self) -> None:
        getattr(self.inner, "close", lambda: None)()

    def run(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        g = self.plan.graph
        consts = g.constants()
        seen: dict[str, Any] = {}

        def before(i: int, read: Callable[[str], np.ndarray]) -> None:
            node = g.nodes[i]
            seen.clear()
            seen.update({n: consts[n] if n in consts else read(n) for n in node.uses()})

        def after(i: int, read: Callable[[str], np.ndarray]) -> None:
            node = g.nodes[i]
            want = evaluate(node, [seen[n] if n else None for n in node.inputs], {n: seen[n] for n in node.captures})
            for name, ref in zip(node.outputs, want):
                if not name or name in consts:
                    continue
                got = read(name)
                exact = np.asarray(ref).dtype.kind != "f"
                max_abs, rel, ok = compare(got, np.asarray(ref), 0.0 if exact else self.tolerance)
                if not ok:
                    fused = ", ".join(f"{op} {nm!r}" for op, nm in node.onnx_ops)
                    raise CheckError(
                        f"step {i} ({node.op_type} {node.name!r}; ONNX nodes: {fused}) differs from the numpy "
                        f"reference in output {name!r}: max abs error {max_abs:.3g}, relative {rel:.3g} "
                        f"(contract: {'exact' if exact else f'{self.tolerance:g} relative'})",
                        i,
                        node,
                        name,
                        max_abs,
                        rel,
                    )
            self.steps_checked += 1

        return self.inner.run_steps(feeds, before, after)


class Checked(_Wrapper):
    kind = "checked"

    def compile(self, plan: Plan, threads: int = 1) -> CheckedExecutable:
        return CheckedExecutable(self.inner.compile(plan, threads), plan)

    def load(self, bundle: Any, threads: int = 1) -> Executable:
        raise BurnedgeError(
            f"{self.name} needs the model, not a bundle: the bundle keeps no graph to run the reference on "
            f"(run the .onnx model with --backend {self.name})"
        )


# -- profiled -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StepTime:
    """One step's median time over the recorded runs, and its share of the whole run."""

    step: int
    label: str
    seconds: float
    share: float


class ProfiledExecutable:
    """Runs `inner`, timing every step; `profile()` summarises the runs so far."""

    def __init__(self, inner: Any, labels: list[str]):
        self.inner, self.labels = inner, labels
        self.arena_bytes = inner.arena_bytes
        self.times: list[list[float]] = []

    def close(self) -> None:
        getattr(self.inner, "close", lambda: None)()

    def run(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        if hasattr(self.inner, "profile"):  # timed inside the backend
            out, times = self.inner.profile(feeds)
            self.times.append(times)
            return out
        stamps: list[float] = []
        out = self.inner.run_steps(
            feeds,
            lambda i, read: stamps.append(time.perf_counter()),
            lambda i, read: stamps.append(time.perf_counter()),
        )
        self.times.append([b - a for a, b in zip(stamps[::2], stamps[1::2])])
        return out

    def profile(self) -> list[StepTime]:
        if not self.times:
            raise BurnedgeError("profiled: nothing has run yet")
        med = np.median(np.array(self.times), axis=0)
        total = float(med.sum()) or 1.0
        return [StepTime(i, label, float(t), float(t) / total) for i, (label, t) in enumerate(zip(self.labels, med))]


def _labels(plan: Plan) -> list[str]:
    return [f"{'+'.join(op for op, _ in n.onnx_ops)} {n.name!r}" for n in plan.steps]


class Profiled(_Wrapper):
    kind = "profiled"

    def compile(self, plan: Plan, threads: int = 1) -> ProfiledExecutable:
        return ProfiledExecutable(self.inner.compile(plan, threads), _labels(plan))

    def load(self, bundle: Any, threads: int = 1) -> ProfiledExecutable:
        labels = [f"{'+'.join(s['ops'])} {s['name']!r}" for s in bundle.plan["steps"]]
        return ProfiledExecutable(self.inner.load(bundle, threads), labels)


WRAPPERS: dict[str, Callable[[Backend], Backend]] = {"checked": Checked, "profiled": Profiled}
