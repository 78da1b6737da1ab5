"""The torch backend: a plan's graph run with torch ops on the CPU or a CUDA device, differentiable.

Plan --GraphModule (module.py)--> forward with torch ops (ops_*.py: one function per ONNX op, registry.py)

It runs the graph as imported, like the numpy reference (no passes, no QDQ import), so every float weight stays a
tensor that training can update: `burnedge.train.to_torch` hands the same module to PyTorch. torch is optional
(the `train` extra); without it the backend says how to install it. `TorchBackend(device="cuda")` runs on a GPU;
the registered `torch` backend runs on the CPU.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import BurnedgeError, UnsupportedOpError
from ...ir import Graph, Node
from ...plan import Plan
from ..base import Backend

try:
    import torch
except ImportError:  # the train extra is not installed: the backend says so (unavailable_reason)
    torch = None

if torch is not None:
    from .module import GraphModule
    from .registry import DTYPES, find, to_numpy, to_tensor
else:
    GraphModule = None  # type: ignore[assignment,misc]

__all__ = ["BACKEND", "INSTALL", "GraphModule", "TorchBackend", "TorchExecutable"]

INSTALL = "torch is not installed: pip install 'burnedge[train]'"


@contextlib.contextmanager
def _full_float32():
    """Float32 as IEEE float32 while a run lasts: CUDA convolutions (cuDNN) default to TF32, 10-bit mantissas,
    about 1e-3 off the reference; training may ask for TF32 itself (the tensor cores), inference matches numpy."""
    matmul = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
            yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = matmul


class TorchExecutable:
    """A plan as a GraphModule on one device; `run` takes numpy feeds and returns numpy outputs (no gradients)."""

    def __init__(self, plan: Plan, device: str):
        self.plan = plan
        self.arena_bytes = plan.arena_bytes  # what the plan needs; torch allocates its own tensors
        self.device = torch.device(device)
        self.module = GraphModule(plan.graph, check=True).to(self.device).eval()

    def _feeds(self, feeds: Mapping[str, np.ndarray]) -> dict[str, Any]:
        return {n: to_tensor(a).to(self.device) for n, a in feeds.items()}

    def run(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return self.run_steps(feeds)

    def run_steps(self, feeds: Mapping[str, np.ndarray], before=None, after=None) -> dict[str, np.ndarray]:
        """Runs node by node; `before(i, read)` / `after(i, read)` see step i's tensors (as the numpy reference)."""

        def read_from(env):
            return lambda name: to_numpy(env[name])

        def hook(i: int, env) -> None:
            if after is not None:
                after(i, read_from(env))
            if before is not None and i + 1 < len(self.plan.graph.nodes):
                before(i + 1, read_from(env))

        ts = self._feeds(feeds)
        if before is not None and self.plan.graph.nodes:
            before(0, read_from({**{n: self.module.tensor(n) for n in self.module._where}, **ts}))
        with torch.no_grad(), _full_float32():
            env = self.module.run_graph(ts, hook if before or after else None)
        consts = self.plan.graph.constants()  # an output folded to a constant (a string one, too) is the graph's
        return {n: np.array(consts[n]) if n in consts else to_numpy(env[n]) for n in self.plan.graph.outputs}


class TorchBackend(Backend):
    name = "torch"

    def __init__(self, device: str = "cpu"):
        self.device = device

    def unavailable_reason(self) -> str | None:
        if torch is None:
            return INSTALL
        if str(self.device).startswith("cuda") and not torch.cuda.is_available():
            return f"device {self.device!r}: torch sees no CUDA device"
        return None

    def supports(self, node: Node, graph: Graph | None = None) -> str | None:
        if torch is None:
            return INSTALL
        if find(node) is None:
            return f"no torch function for {node.op.key}"
        if graph is not None:
            for name in [*node.inputs, *node.outputs]:
                if name and graph.values[name].dtype.name not in DTYPES:
                    return f"no torch dtype for {graph.values[name].dtype.name} (tensor {name!r})"
        return None

    def compile(self, plan: Plan, threads: int = 1) -> TorchExecutable:
        """The plan's module; a node whose op or dtype torch lacks fails here, listing every such node."""
        self.check(plan.graph)
        return TorchExecutable(plan, self.device)

    def check(self, graph: Graph) -> None:
        """Raises UnsupportedOpError listing every node of `graph` whose op or dtype torch lacks (or that torch
        is missing)."""
        if torch is None:
            raise BurnedgeError(INSTALL)
        missing: dict[tuple[str, str, int], list[str]] = {}
        for node in graph.nodes:
            if self.supports(node, graph) is not None:
                missing.setdefault((node.op.domain, node.op_type, graph.opset), []).append(node.name)
        if missing:
            raise UnsupportedOpError(missing, backend=self.name)


BACKEND = TorchBackend()
