"""Importers: turn a model file into a Model. `load` picks the importer by file suffix."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from onnx import ModelProto

from ..errors import ModelError
from ..model import Model
from . import onnx as onnx_importer

__all__ = ["load"]


def load(
    path: str | os.PathLike[str] | ModelProto,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    bind: Mapping[str, Any] | None = None,
) -> Model:
    """Imports a model file (or an in-memory onnx.ModelProto) into a static Model.

    `input_shapes` fixes dynamic dimensions ({"x": (1, 3, 224, 224)}); `bind` replaces inputs by constants so
    that the shape arithmetic and control flow depending on them fold away.
    """
    if isinstance(path, ModelProto):
        graph = onnx_importer.from_proto(path, input_shapes, bind)
        return Model(graph, name=path.graph.name or "model", source=None, producer=path.producer_name)
    path = Path(path)
    if path.suffix.lower() != ".onnx":
        raise ModelError(f"{path}: unknown model format {path.suffix!r}; burnedge imports .onnx files")
    proto = onnx_importer.read(path)
    graph = onnx_importer.from_proto(proto, input_shapes, bind)
    return Model(graph, name=proto.graph.name or path.stem, source=path, producer=proto.producer_name)
