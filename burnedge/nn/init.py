"""Parameter initialisation as torch.nn does it by default (the same distributions; not torch's random stream).

`manual_seed` makes new modules' weights repeatable."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["fan_in", "manual_seed", "normal", "uniform"]

_rng = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    """Restarts the generator that new modules draw their weights from."""
    global _rng
    _rng = np.random.default_rng(seed)


def uniform(shape: tuple[int, ...], bound: float) -> np.ndarray:
    """U(-bound, bound) as float32: torch's kaiming_uniform_(a=sqrt(5)) for weights is bound 1/sqrt(fan_in)."""
    return _rng.uniform(-bound, bound, size=shape).astype(np.float32)


def normal(shape: tuple[int, ...], std: float = 1.0) -> np.ndarray:
    return (_rng.standard_normal(size=shape) * std).astype(np.float32)


def fan_in(shape: tuple[int, ...]) -> int:
    """torch's fan_in of a weight: dim 1 times the receptive field (dims 2...)."""
    return int(shape[1] * math.prod(shape[2:])) if len(shape) > 1 else int(shape[0])
