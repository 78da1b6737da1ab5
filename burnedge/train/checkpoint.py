"""Training checkpoints: the model's state as safetensors under PyTorch's names, and a small sidecar with what
resuming needs besides the weights.

    DIR/last.safetensors      the model's state dict after the latest epoch (loads in torch, burnedge, anything)
    DIR/last.state.pt         optimizer, LR schedule, epoch, history, early-stopping state, random generators
    DIR/best.safetensors      the model at its best monitored value so far

Every file is written atomically (a temporary file renamed over the old one), weights first and the sidecar
last, so an interrupted write leaves the previous checkpoint whole: the sidecar names the epoch it goes with
and the weights it expects (their keys), and a mismatch is refused on resume.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..errors import WeightsError
from ..files import write_atomic
from ..nn.weights import read_safetensors, write_safetensors
from .bridge import state_arrays

__all__ = ["load", "save", "save_weights"]


def save_weights(path: str | os.PathLike[str], module: torch.nn.Module) -> Path:
    """`module`'s state dict as one safetensors file (atomically)."""
    return write_safetensors(path, state_arrays(module.state_dict()))


def save(folder: str | os.PathLike[str], module: torch.nn.Module, extra: Mapping[str, Any], best: bool) -> None:
    """Writes last.safetensors and last.state.pt (`extra`: what resuming needs), and best.safetensors if `best`."""
    folder = Path(folder)
    weights = save_weights(folder / "last.safetensors", module)
    if best:
        save_weights(folder / "best.safetensors", module)
    sidecar = {
        **extra,
        "keys": sorted(module.state_dict()),
        "rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
    }
    write_atomic(weights.with_name("last.state.pt"), lambda f: torch.save(sidecar, f))


def load(folder: str | os.PathLike[str], module: torch.nn.Module) -> dict[str, Any]:
    """Loads DIR/last.safetensors into `module` and returns the sidecar (the random generators restored)."""
    folder = Path(folder)
    weights, sidecar_path = folder / "last.safetensors", folder / "last.state.pt"
    for p in (weights, sidecar_path):
        if not p.is_file():
            raise WeightsError(f"resume: {p} is missing; a checkpoint folder holds last.safetensors and last.state.pt")
    try:
        sidecar = torch.load(sidecar_path, map_location="cpu", weights_only=True)
    except Exception as exc:  # a truncated or foreign file
        raise WeightsError(f"resume: cannot read {sidecar_path}: {type(exc).__name__}: {exc}") from None
    arrays = read_safetensors(weights)
    if sorted(arrays) != sidecar.get("keys"):
        raise WeightsError(f"resume: {weights} does not hold the weights {sidecar_path} was written with")
    own = module.state_dict()
    problems = [k for k in own if k not in arrays] + [k for k in arrays if k not in own]
    if problems:
        raise WeightsError(f"resume: {weights} does not fit the model: keys {', '.join(map(repr, problems[:5]))}")
    state = {k: torch.from_numpy(np.ascontiguousarray(a)).to(own[k].dtype) for k, a in arrays.items()}
    module.load_state_dict(state)
    torch.set_rng_state(sidecar["rng"])
    if sidecar.get("cuda_rng") and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(sidecar["cuda_rng"])
    return sidecar
