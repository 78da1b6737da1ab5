"""Importers: turn a model file into a Model. `load` picks the importer by file suffix."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from onnx import ModelProto, helper

from ..errors import InputError, ModelError
from ..feeds import lossless
from ..files import require_regular
from ..model import Model
from . import onnx as onnx_importer

__all__ = ["bound", "load"]


def load(
    path: str | os.PathLike[str] | ModelProto,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    bind: Mapping[str, Any] | None = None,
) -> Model:
    """Imports a model file (or an in-memory onnx.ModelProto) into a static Model.

    `input_shapes` fixes dynamic dimensions ({"x": (1, 3, 224, 224)}); `bind` replaces inputs by constants so
    that the shape arithmetic and control flow depending on them fold away; a bound value takes the input's dtype
    when nothing is lost (16000 for an int64 input) and its declared static shape when the sizes agree.
    """
    if isinstance(path, ModelProto):
        graph = onnx_importer.from_proto(path, input_shapes, bound(path, bind))
        return Model(graph, name=path.graph.name or "model", source=None, producer=path.producer_name)
    path = require_regular(path, ModelError, "model")
    if path.suffix.lower() != ".onnx":
        raise ModelError(f"{path}: unknown model format {path.suffix!r}; burnedge imports .onnx files")
    proto = onnx_importer.read(path)
    graph = onnx_importer.from_proto(proto, input_shapes, bound(proto, bind))
    return Model(graph, name=proto.graph.name or path.stem, source=path, producer=proto.producer_name)


def bound(proto: ModelProto, bind: Mapping[str, Any] | None) -> dict[str, np.ndarray]:
    """The `bind` values as arrays of their inputs' declared dtypes (lossless) and static shapes."""
    declared = {vi.name: vi.type.tensor_type for vi in proto.graph.input if vi.type.HasField("tensor_type")}
    out = {}
    for name, value in (bind or {}).items():
        arr = np.asarray(value)
        tt = declared.get(name)
        if tt is None:  # an unknown name: the importer says which inputs there are
            out[name] = arr
            continue
        if tt.elem_type:
            try:
                arr = lossless(arr, helper.tensor_dtype_to_np_dtype(tt.elem_type), f"bind[{name!r}]")
            except InputError as exc:
                raise ModelError(str(exc)) from None
        dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tt.shape.dim]
        if tt.HasField("shape") and all(d >= 0 for d in dims) and list(arr.shape) != dims:
            if arr.size != int(np.prod(dims, dtype=np.int64)):
                raise ModelError(f"bind[{name!r}] has shape {list(arr.shape)}; the model declares {dims}")
            arr = arr.reshape(dims)
        out[name] = arr
    return out
