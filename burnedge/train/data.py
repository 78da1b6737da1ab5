"""Batches as the Learner takes them: any iterable of (inputs, targets), torch tensors or numpy arrays.

`inputs` is one array (a one-input model), a tuple or list of them (in the model's input order) or a dict by input
name; `targets` one array. numpy float64 becomes float32 (numpy's default, not a model's) and integer targets
int64 (what torch's class losses take). `arrays` makes a loader of numpy pairs from whole arrays.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from ..errors import BurnedgeError

__all__ = ["ArrayLoader", "batch_size", "to_device"]


def _tensor(a: Any, device: torch.device, target: bool = False) -> torch.Tensor:
    if isinstance(a, np.ndarray) or np.isscalar(a):
        a = np.asarray(a)
        if a.dtype == np.float64:
            a = a.astype(np.float32)
        t = torch.from_numpy(np.ascontiguousarray(a))
    elif isinstance(a, torch.Tensor):
        t = a
    else:
        raise BurnedgeError(f"a batch holds a {type(a).__name__}; expected torch tensors or numpy arrays")
    if target and not t.is_floating_point() and t.dtype != torch.bool:
        t = t.long()
    return t.to(device, non_blocking=True)


def to_device(batch: Any, device: torch.device) -> tuple[tuple[torch.Tensor, ...] | dict[str, torch.Tensor], Any]:
    """(inputs, targets) of one batch on `device`: inputs as a tuple (positional) or a dict (by name)."""
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        raise BurnedgeError(f"a batch must be a pair (inputs, targets); got {type(batch).__name__}")
    x, y = batch
    if isinstance(x, dict):
        inputs: Any = {k: _tensor(v, device) for k, v in x.items()}
    elif isinstance(x, (tuple, list)):
        inputs = tuple(_tensor(v, device) for v in x)
    else:
        inputs = (_tensor(x, device),)
    return inputs, _tensor(y, device, target=True)


def batch_size(inputs: tuple[torch.Tensor, ...] | dict[str, torch.Tensor]) -> int:
    first = next(iter(inputs.values())) if isinstance(inputs, dict) else inputs[0]
    return int(first.shape[0]) if first.ndim else 1


class ArrayLoader:
    """Batches of `batch` samples from whole arrays `x` and `y` (numpy or torch), in order or shuffled with a
    seed that changes by epoch (`set_epoch`), the last short batch kept unless `drop_last`."""

    def __init__(self, x: Any, y: Any, batch: int, shuffle: bool = False, seed: int = 0, drop_last: bool = False):
        if len(x) != len(y):
            raise BurnedgeError(f"inputs and targets differ in length: {len(x)} samples against {len(y)} targets")
        if batch < 1:
            raise BurnedgeError(f"batch size {batch}: expected at least 1")
        self.x, self.y, self.batch = x, y, batch
        self.shuffle, self.seed, self.drop_last, self.epoch = shuffle, seed, drop_last, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        n = len(self.x)
        return n // self.batch if self.drop_last else -(-n // self.batch)

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        n = len(self.x)
        order = np.random.default_rng(self.seed + self.epoch).permutation(n) if self.shuffle else None
        for i in range(len(self)):
            if order is None:
                yield self.x[i * self.batch : (i + 1) * self.batch], self.y[i * self.batch : (i + 1) * self.batch]
            else:
                idx = order[i * self.batch : (i + 1) * self.batch]
                yield self.x[idx], self.y[idx]
