"""A bundle's weights.safetensors: the plan's weight blob, member by member, and the constant outputs.

safetensors has no type for float8, int4 and the like: those members are stored as their bytes (uint8) and the
layout records the real dtype and shape, so a loader rebuilds the blob byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from safetensors.numpy import save

from ..errors import StaticPlanError

SAFETENSORS = {"bool", "float16", "float32", "float64", "int8", "int16", "int32", "int64"}
SAFETENSORS |= {"uint8", "uint16", "uint32", "uint64"}


def weights_file(
    blob: Mapping[str, tuple[int, np.ndarray]], constants: dict[str, np.ndarray]
) -> tuple[bytes, list[dict[str, Any]], dict[str, str]]:
    """weights.safetensors, the blob layout, and the key of each constant output."""
    tensors: dict[str, np.ndarray] = {}
    layout = []

    def add(key: str, arr: np.ndarray) -> None:
        arr = np.ascontiguousarray(arr)
        tensors[key] = arr if arr.dtype.name in SAFETENSORS else arr.reshape(-1).view(np.uint8)

    for key, (offset, arr) in sorted(blob.items(), key=lambda kv: kv[1][0]):
        add(key, arr)
        layout.append(
            {"key": key, "offset": offset, "bytes": arr.nbytes, "dtype": arr.dtype.name, "shape": list(arr.shape)}
        )
    keys = {}
    for name, arr in constants.items():
        if arr.dtype.kind in "OSU":  # a graph folded to constant strings (a StringSplit of a bound input)
            raise StaticPlanError(f"graph output {name!r} is a constant string tensor: a bundle holds numbers "
                                  "(strings have no fixed size); the numpy backend runs the model")  # fmt: skip
        key = f"output:{name}"
        while key in tensors:
            key += "'"
        add(key, arr)
        keys[name] = key
    return save(tensors), layout, keys
