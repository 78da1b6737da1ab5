"""The OpenCL backend: a plan becomes one OpenCL program over one device arena, run on an in-order queue.

Plan --emit (ops_*.py: one generator per op family)--> program source + launches --build (cached per device and
source hash)--> CLModel.run_async / run

It runs the C backend's pass pipeline (the same epilogue and elementwise fusion: a fused chain or a conv with
its bias, residual and activation is one kernel) and the same planner; every step is one kernel (a few for
Concat), with shapes and offsets as constants. pyopencl is optional (the `opencl` extra) and loaded only here;
without it, or without an OpenCL platform, the backend says what to install. GEMM tile sizes are tuned per
device (tune.py; cached under $BURNEDGE_HOME). A bundle carries the program source and the launch table
(`opencl/model.cl`, `opencl/launches.json`): loading it builds the program once per device.
"""

from __future__ import annotations

import json

import numpy as np

from ...bundle import Bundle, BundleError, signing
from ...errors import UnsupportedOpError
from ...importers.functions import expand_functions, function_of
from ...ir import Graph, Node
from ...passes import DEFAULT_PIPELINE
from ...plan import Plan
from ..base import Artifacts, Backend, Library
from .emit import CLTYPES, Emitted, Launch, OpenCLError, emit, find, weights_blob
from .gemm import split_k
from .ops_dense import depthwise_pairs, inline_depthwise, problem
from .runtime import INSTALL, CLModel, Slot, cl, compute_units, unavailable
from .tune import Tuner

__all__ = ["BACKEND", "CLModel", "OpenCLBackend", "OpenCLError"]

SOURCE = "opencl/model.cl"
LAUNCHES = "opencl/launches.json"


def _slots(plan: Plan, names: list[str]) -> list[Slot]:
    g = plan.graph
    return [Slot(n, plan.offsets.get(n), g.values[n].dtype, g.values[n].shape) for n in names]


def _constants(plan: Plan) -> dict[str, np.ndarray]:
    return {n: plan.graph.values[n].data for n in plan.graph.outputs if plan.graph.values[n].is_const}


class OpenCLBackend(Backend):
    name = "opencl"
    pipeline = (*DEFAULT_PIPELINE[:-1], "fold_transpose", "dce")  # Transposes around a MatMul cost no launch

    def __init__(self, tune: bool | None = None):
        self.tune = tune  # None: tune on GPUs (a measured choice pays there), heuristics elsewhere

    def unavailable_reason(self) -> str | None:
        return unavailable()

    def supports(self, node: Node, graph: Graph | None = None) -> str | None:
        if cl is None:
            return INSTALL
        if find(node) is None:
            if graph is None and self.via(node):  # `prepare` expands it before the passes
                return None
            return f"no OpenCL kernel for {node.op.key}"
        if graph is not None:
            for name in [*node.inputs, *node.outputs]:
                if name and graph.values[name].dtype.name not in CLTYPES:
                    return f"no OpenCL type for {graph.values[name].dtype.name} (tensor {name!r})"
        return None

    def via(self, node: Node) -> str | None:
        return "via its ONNX function" if find(node) is None and function_of(node) else None

    def prepare(self, graph: Graph) -> Graph:
        """Ops without an OpenCL kernel whose ONNX schema defines a function body become that body."""
        return expand_functions(graph, lambda node: find(node) is None)

    def scratch(self, graph: Graph, node: Node) -> int:
        """A GEMM split over K (gemm.split_k: a batch-1 layer too small for the device) keeps its partial sums
        in the arena: slices x outputs floats; nothing otherwise."""
        p = problem(graph, node) if cl is not None and find(node) is not None else None
        if p is None or unavailable():
            return 0
        m, n, k, z = p
        s = split_k(m, n, k, z, compute_units())
        return s * m * n * z * 4 if s > 1 else 0

    def reads(self, graph: Graph) -> dict[int, list[str]]:
        """A 1x1 convolution that computes the depthwise one before it (ops_dense.inline_depthwise) reads that
        one's input: it must outlive the step."""
        if cl is None:
            return {}
        return {step: [dw.inputs[0]] for step, dw in depthwise_pairs(graph).items()}

    def _emit(self, plan: Plan) -> Emitted:
        tuner = Tuner(plan, self.tune)
        return emit(plan, tuner.choose, tuner.cached(), tuner.compute_units, inline_depthwise(plan))

    def compile(self, plan: Plan, threads: int = 1) -> CLModel:
        self.check(plan.graph)
        e = self._emit(plan)
        g = plan.graph
        tensors = {n: Slot(n, off, g.values[n].dtype, g.values[n].shape) for n, off in plan.offsets.items()}
        model = CLModel(
            e.source,
            e.launches,
            weights_blob(e.weights, e.weight_bytes),
            plan.arena_bytes,
            _slots(plan, list(g.inputs)),
            _slots(plan, list(g.outputs)),
            _constants(plan),
            tensors,
            steps=len(g.nodes),
            flops=e.flops,
        )
        model.plan = plan
        return model

    def check(self, graph: Graph) -> None:
        """Raises UnsupportedOpError listing every node the OpenCL backend cannot run."""
        missing: dict[tuple[str, str, int], list[str]] = {}
        for node in graph.nodes:
            if self.supports(node, graph) is not None:
                missing.setdefault((node.op.domain, node.op_type, graph.opset), []).append(node.name)
        if missing:
            raise UnsupportedOpError(missing, backend=self.name)

    def artifacts(self, plan: Plan) -> Artifacts:
        e = self._emit(plan)
        table = {
            "launches": [ln.to_json() for ln in e.launches],
            "steps": len(plan.graph.nodes),
            "flops": e.flops,
            "tuning": e.tuning,
        }
        members = {SOURCE: e.source.encode(), LAUNCHES: json.dumps(table, indent=1).encode()}
        return Artifacts(members, e.weights, e.weight_bytes, payload=e)

    def build(self, artifacts: Artifacts, target) -> Library:
        """Nothing to compile ahead: the program is built on the device at load (and cached there)."""
        return Library({}, {"path": SOURCE})

    def load(self, bundle: Bundle, threads: int = 1) -> CLModel:
        signing.require(bundle, "load its OpenCL program")
        try:
            source = bundle.member(SOURCE).decode()
            table = json.loads(bundle.member(LAUNCHES))
            launches = [Launch.from_json(d) for d in table["launches"]]
        except (KeyError, ValueError, TypeError) as exc:
            raise BundleError(f"{bundle.path}: no usable OpenCL program in the bundle ({exc})") from None
        m = bundle.manifest

        def slots(rows: list[dict]) -> list[Slot]:
            return [Slot(t["name"], t.get("offset"), np.dtype(t["dtype"]), tuple(t["shape"])) for t in rows]

        return CLModel(
            source,
            launches,
            bundle.weights(),
            int(m["arena_bytes"]),
            slots(m["inputs"]),
            slots(m["outputs"]),
            bundle.constant_outputs(),
            steps=int(table.get("steps", 0)),
            flops=int(table.get("flops", 0)),
        )


BACKEND = OpenCLBackend()
