"""Model: an imported, static Graph with the facts a user asks about (inputs, outputs, source)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .ir import Graph

__all__ = ["Model", "TensorInfo"]


class TensorInfo(NamedTuple):
    """Name, static shape and element type of a model input or output."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype


@dataclass
class Model:
    """An imported model: its graph plus where it came from."""

    graph: Graph
    name: str
    source: Path | None = None
    producer: str = ""

    def _info(self, names: list[str]) -> list[TensorInfo]:
        return [TensorInfo(n, self.graph.values[n].shape, self.graph.values[n].dtype) for n in names]

    @property
    def inputs(self) -> list[TensorInfo]:
        return self._info(self.graph.inputs)

    @property
    def outputs(self) -> list[TensorInfo]:
        return self._info(self.graph.outputs)

    @property
    def opset(self) -> int:
        return self.graph.opset

    def __repr__(self) -> str:
        return f"Model({self.name!r}, {len(self.graph.nodes)} nodes, opset {self.opset})"
