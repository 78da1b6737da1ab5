"""Session: runs a model on a backend, checking every feed's name, shape and dtype first."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import backends
from .errors import BurnedgeError, InputError
from .importers import load
from .model import Model, TensorInfo

__all__ = ["Session"]


class Session:
    """A model compiled for one backend. `run(feeds)` maps input names to arrays and returns outputs by name."""

    def __init__(self, model: Model | str | os.PathLike[str], backend: str = "numpy", threads: int = 1):
        if isinstance(model, (str, os.PathLike)):
            model = load(Path(model))
        if not isinstance(model, Model):
            raise BurnedgeError(f"Session needs a Model or a model path, not {type(model).__name__}")
        self.model = model
        self.backend = backends.get(backend)
        options = {"threads": threads} if threads != 1 else {}
        self._exe = self.backend.compile(model.graph, **options)

    @property
    def inputs(self) -> list[TensorInfo]:
        return self.model.inputs

    @property
    def outputs(self) -> list[TensorInfo]:
        return self.model.outputs

    @property
    def arena_bytes(self) -> int:
        return self._exe.arena_bytes

    def _check(self, feeds: Mapping[str, object]) -> dict[str, np.ndarray]:
        expected = {i.name: i for i in self.inputs}
        unknown = sorted(set(feeds) - set(expected))
        if unknown:
            raise InputError(f"unknown input(s) {unknown}; the model's inputs are {sorted(expected)}")
        absent = sorted(set(expected) - set(feeds))
        if absent:
            raise InputError(f"missing input(s) {absent}; the model's inputs are {sorted(expected)}")
        out = {}
        for name, info in expected.items():
            arr = feeds[name]
            if not isinstance(arr, np.ndarray):
                arr = np.asarray(arr)
            if arr.dtype != info.dtype:
                raise InputError(f"input {name!r}: expected dtype {info.dtype}, got {arr.dtype}")
            if tuple(arr.shape) != tuple(info.shape):
                raise InputError(f"input {name!r}: expected shape {list(info.shape)}, got {list(arr.shape)}")
            out[name] = arr
        return out

    def run(self, feeds: Mapping[str, object]) -> dict[str, np.ndarray]:
        """Runs the model once; returns {output name: array}."""
        return self._exe.run(self._check(feeds))

    def __repr__(self) -> str:
        return f"Session({self.model.name!r}, backend={self.backend.name!r})"
