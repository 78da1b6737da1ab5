"""The zoo's registry: each architecture, what checkpoint it loads, its inputs, and loading one into a Model.

Loading (`load_checkpoint`), in order, each step failing with one error that names the file, key or input:
1. the architecture by name (an unknown one: the error lists the registered ones);
2. its config (a Hugging Face config.json) where it needs one; one that takes none refuses one;
3. the checkpoint's tensors (`burnedge.nn.read_checkpoint`: .safetensors, or .pt/.pth through torch), renamed
   the way the upstream loader does (`bert.` prefix, TF-era `gamma`/`beta`) and with the upstream's task heads
   left out (`Architecture.prepare`);
4. the module built from the config and the checkpoint's shapes (a fine-tuned classifier's class count), then its
   weights loaded by name (`Module.load_state_dict`: one error lists every missing, unexpected and misshapen key);
5. the input shapes: the defaults, overridden by `input_shapes`; a name the architecture lacks, a wrong rank or a
   size it cannot take is refused (`Architecture.check`);
6. the module traced into a Model named after the architecture.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ModelError
from ..model import Model
from ..nn import Module, read_checkpoint, trace
from .config import read_config

__all__ = ["ARCHITECTURES", "Architecture", "Input", "load_checkpoint", "register", "resolve_shapes"]

Tensors = dict[str, np.ndarray]
Config = dict[str, Any]
Shapes = dict[str, tuple[int, ...]]


@dataclass(frozen=True)
class Input:
    """One model input: its name, element type and default shape."""

    name: str
    dtype: type
    shape: tuple[int, ...]


@dataclass(frozen=True)
class Architecture:
    """A zoo entry. `build(config, tensors, options)` makes the module whose names match the prepared checkpoint
    (and may add to `tensors` the buffers that checkpoints may leave out, such as BERT's position_ids);
    `inputs(config)` are the inputs with their default shapes; `check(config, shapes, given)` returns the shapes to
    use (inputs tied to a given one follow it) or refuses what the network cannot take (a ModelError);
    `options` are the keyword options `build` takes, with their defaults."""

    name: str
    summary: str
    checkpoint: str
    build: Callable[[Config, Tensors, dict[str, Any]], Module]
    inputs: Callable[[Config], tuple[Input, ...]]
    needs_config: bool = False
    prepare: Callable[[Tensors], Tensors] = lambda tensors: tensors
    check: Callable[[Config, Shapes, set[str]], Shapes] = lambda config, shapes, given: shapes
    options: dict[str, Any] = field(default_factory=dict)


ARCHITECTURES: dict[str, Architecture] = {}


def register(arch: Architecture) -> Architecture:
    if arch.name in ARCHITECTURES:
        raise ValueError(f"architecture {arch.name!r} registered twice")
    ARCHITECTURES[arch.name] = arch
    return arch


def _architecture(name: str) -> Architecture:
    if name not in ARCHITECTURES:
        raise ModelError(f"unknown architecture {name!r}; the zoo has: {', '.join(sorted(ARCHITECTURES))}")
    return ARCHITECTURES[name]


def _config(arch: Architecture, config: str | os.PathLike[str] | Mapping[str, Any] | None) -> Config:
    if arch.needs_config and config is None:
        raise ModelError(f"architecture {arch.name!r} needs config= (the checkpoint's config.json)")
    if not arch.needs_config and config is not None:
        raise ModelError(f"architecture {arch.name!r} takes no config (its structure is fixed); leave config out")
    return read_config(config) if config is not None else {}


def _options(arch: Architecture, given: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(given) - set(arch.options))
    if unknown:
        known = ", ".join(f"{k}={v!r}" for k, v in arch.options.items()) or "none"
        raise ModelError(f"architecture {arch.name!r} has no option {', '.join(unknown)}; its options: {known}")
    return {**arch.options, **given}


def resolve_shapes(arch: Architecture, config: Config, given: Mapping[str, Sequence[int]] | None) -> Shapes:
    """The default input shapes with `given` on top, checked: names, ranks, positive sizes, then `arch.check`."""
    inputs = {i.name: i for i in arch.inputs(config)}
    unknown = sorted(set(given or {}) - set(inputs))
    if unknown:
        raise ModelError(
            f"{arch.name}: no input named {', '.join(map(repr, unknown))}; its inputs are {', '.join(inputs)}"
        )
    shapes = {name: tuple(i.shape) for name, i in inputs.items()}
    for name, shape in (given or {}).items():
        shape = tuple(int(d) for d in shape)
        want = inputs[name].shape
        if len(shape) != len(want) or min(shape, default=1) < 1:
            raise ModelError(
                f"{arch.name}: input {name!r} has shape {list(shape)}; expected {len(want)} positive sizes "
                f"like {list(want)}"
            )
        shapes[name] = shape
    return arch.check(config, shapes, set(given or {}))


def load_checkpoint(
    path: str | os.PathLike[str],
    arch: str,
    config: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    **options: Any,
) -> Model:
    """A zoo architecture with the weights of the checkpoint at `path`, traced into a static Model."""
    entry = _architecture(arch)
    cfg = _config(entry, config)
    opts = _options(entry, options)
    tensors = entry.prepare(read_checkpoint(path))
    shapes = resolve_shapes(entry, cfg, input_shapes)
    module = entry.build(cfg, tensors, opts)
    module.load_state_dict(tensors, source=str(path))
    dtypes = {i.name: i.dtype for i in entry.inputs(cfg)}
    model = trace(module.eval(), {name: np.zeros(shape, dtypes[name]) for name, shape in shapes.items()})
    model.name, model.source = entry.name, Path(path)
    return model
