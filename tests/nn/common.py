"""Helpers of the burnedge.nn tests: the same module built by torch.nn and burnedge.nn, run and compared."""

from __future__ import annotations

import numpy as np
import torch

import burnedge

SEED = 0


def randomize(module: torch.nn.Module, seed: int = SEED) -> torch.nn.Module:
    """`module` in eval mode, with every float parameter and buffer that torch starts at a constant (norm weights
    and biases, running statistics) drawn anew (variances positive), so that no weight is a trivial 1 or 0; the
    random weights keep torch's own initialisation (activations of a realistic size)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in [*module.named_parameters(), *module.named_buffers()]:
            if not t.dtype.is_floating_point or (t.numel() > 1 and t.min() != t.max()):
                continue
            values = torch.rand(t.shape, generator=g)
            t.copy_(values + 0.5 if name.endswith("running_var") else values * 2 - 1)
    return module.eval()


def run(model: burnedge.Model, feeds: dict[str, np.ndarray], backend: str = "numpy") -> dict[str, np.ndarray]:
    return burnedge.Session(model, backend=backend).run(feeds)


def torch_out(module: torch.nn.Module, *arrays: np.ndarray):
    with torch.no_grad():
        out = module(*[torch.from_numpy(a) for a in arrays])
    return out.numpy() if isinstance(out, torch.Tensor) else [o.numpy() for o in out]


def rand(shape: tuple[int, ...], seed: int = SEED) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
