"""Deterministic stand-in weights for a state-dict layout, so a recorded upstream output can be reproduced.

`fill(layout, seed)` gives every key of {name: (shape, dtype)} a value from one seeded generator, in the layout's
order: conv / linear weights He-scaled, BatchNorm scales in [0.5, 1] and running variances in [0.5, 1.5] (so a deep
network's activations stay in range), biases and running means small, `num_batches_tracked` 0.
"""

from __future__ import annotations

import numpy as np


def fill(layout: dict[str, tuple[list[int], str]], seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for name, (shape, dtype) in layout.items():
        leaf = name.rsplit(".", 1)[-1]
        if np.dtype(dtype).kind != "f":
            out[name] = np.zeros(shape, dtype)
        elif leaf == "running_var":
            out[name] = rng.uniform(0.5, 1.5, shape)
        elif len(shape) >= 2:
            out[name] = rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[1:]))
        elif leaf == "weight":
            out[name] = rng.uniform(0.5, 1.0, shape)
        else:  # biases, running means
            out[name] = rng.standard_normal(shape) * 0.1
        out[name] = out[name].astype(dtype)
    return out
