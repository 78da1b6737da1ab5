"""Helpers of the zoo tests: torch modules' weights into burnedge.nn modules, and running a traced Model."""

from __future__ import annotations

import numpy as np
import torch

import burnedge


def state_of(module: torch.nn.Module) -> dict[str, np.ndarray]:
    """A torch module's state dict as numpy arrays (what a safetensors checkpoint of it holds)."""
    return {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}


def run(model: burnedge.Model, feeds: dict[str, np.ndarray], backend: str = "numpy") -> dict[str, np.ndarray]:
    return burnedge.Session(model, backend=backend).run(feeds)


def worst(actual: np.ndarray, expected: np.ndarray) -> float:
    """The largest absolute difference (shapes must agree)."""
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    return float(np.abs(actual.astype(np.float64) - expected.astype(np.float64)).max())


def randn(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
