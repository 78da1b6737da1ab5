"""The zoo: architectures written in burnedge.nn that load the checkpoints their upstream projects publish.

`load` is `burnedge.load`: an .onnx file goes to the ONNX importer; a .safetensors checkpoint, which holds weights
and names but no architecture, needs `arch=` (one of ARCHITECTURES; `burnedge zoo` lists them) and, for a Hugging
Face model, `config=` (its config.json).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from onnx import ModelProto

from ..errors import ModelError
from ..importers import load as load_onnx
from ..model import Model
from . import bert, mlperf_tiny, mobilenet_v2, resnet  # noqa: F401 - each registers its architectures
from .registry import ARCHITECTURES, Architecture, Input, load_checkpoint

__all__ = ["ARCHITECTURES", "Architecture", "Input", "load", "load_checkpoint"]


def load(
    path: str | os.PathLike[str] | ModelProto,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    bind: Mapping[str, Any] | None = None,
    arch: str | None = None,
    config: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    **options: Any,
) -> Model:
    """Imports a model into a static Model: an ONNX model (see `burnedge.importers.load` for `input_shapes` and
    `bind`), or with `arch` a checkpoint for that zoo architecture (`config`: its config.json where it needs one;
    `input_shapes` override the architecture's default shapes; `options` are the architecture's, e.g. BERT's
    pooling="mean")."""
    if arch is None:
        if config is not None or options:
            raise ModelError("config= and architecture options apply to a zoo checkpoint: give arch= too")
        if not isinstance(path, ModelProto) and Path(path).suffix.lower() == ".safetensors":
            raise ModelError(
                f"{path}: a safetensors checkpoint holds weights, not an architecture: give arch= "
                f"({', '.join(sorted(ARCHITECTURES))}) or write the model in burnedge.nn and load_safetensors()"
            )
        return load_onnx(path, input_shapes=input_shapes, bind=bind)
    if bind:
        raise ModelError("bind= applies to ONNX models; a zoo architecture's inputs are its own")
    if isinstance(path, ModelProto):
        raise ModelError(f"arch={arch!r} loads a .safetensors checkpoint, not an ONNX model")
    return load_checkpoint(path, arch, config, input_shapes, **options)
