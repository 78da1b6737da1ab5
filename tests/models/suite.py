"""The model suite: every ``<name>/gen.py`` beside this file builds one ONNX model.

``MODELS`` maps each model name to its ``build(out_path)`` function (gen.py and torch
are only imported when a model is actually built), ``build_model`` caches built files
under a name keyed by gen.py's hash, and ``example_feeds`` makes matching random inputs.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parent


def _load_gen(gen_path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"burnedge_models_{gen_path.parent.name}", gen_path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _builder(gen_path: Path) -> Callable[[Path], None]:
    def build(out_path: Path) -> None:
        _load_gen(gen_path).build(Path(out_path))

    build.__doc__ = f"Build {gen_path.parent.name} by running {gen_path}."
    return build


MODELS: dict[str, Callable[[Path], None]] = {gen.parent.name: _builder(gen) for gen in sorted(ROOT.glob("*/gen.py"))}


def build_model(name: str, cache_dir: Path) -> Path:
    """Return cache_dir/<name>-<gen.py sha256[:12]>.onnx, building it first if missing."""
    gen = ROOT / name / "gen.py"
    digest = hashlib.sha256(gen.read_bytes()).hexdigest()[:12]
    cache_dir = Path(cache_dir)
    out = cache_dir / f"{name}-{digest}.onnx"
    if out.exists():
        return out
    cache_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}-", suffix=".tmp", dir=cache_dir)
    os.close(fd)
    try:
        MODELS[name](Path(tmp))
        os.chmod(tmp, 0o644)  # mkstemp makes it owner-only
        os.replace(tmp, out)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return out


def _vocab_size(graph: onnx.GraphProto, input_name: str) -> int:
    """Rows of the smallest embedding table that a Gather indexes with input_name."""
    tables = {t.name: t for t in graph.initializer}
    rows = [
        tables[node.input[0]].dims[0]
        for node in graph.node
        if node.op_type == "Gather" and node.input[1] == input_name and node.input[0] in tables
    ]
    if not rows:
        raise ValueError(f"integer input {input_name!r} indexes no embedding table")
    return min(rows)


def _padding_mask(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Per row, ones for a random number of leading tokens (at least half) then zeros."""
    *rows, seq = shape
    lengths = rng.integers(seq // 2, seq, size=rows or None)  # always at least one zero
    return (np.arange(seq) < np.expand_dims(lengths, -1)).astype(dtype)


def example_feeds(model_path: Path, seed: int) -> dict[str, np.ndarray]:
    """Deterministic random inputs for every graph input of the model at model_path.

    Floats are standard normal; integer inputs whose name contains "mask" are padding
    masks with some zeros; other integer inputs are token ids within the embedding table.
    """
    graph = onnx.load(str(model_path), load_external_data=False).graph
    initializers = {t.name for t in graph.initializer}
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray] = {}
    for value in graph.input:
        if value.name in initializers:
            continue
        tensor_type = value.type.tensor_type
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor_type.elem_type))
        shape = tuple(dim.dim_value for dim in tensor_type.shape.dim)
        if not all(dim.HasField("dim_value") for dim in tensor_type.shape.dim):
            raise ValueError(f"input {value.name!r} has a symbolic shape")
        if np.issubdtype(dtype, np.floating):
            feeds[value.name] = rng.standard_normal(shape).astype(dtype)
        elif np.issubdtype(dtype, np.integer) and "mask" in value.name:
            feeds[value.name] = _padding_mask(rng, shape, dtype)
        elif np.issubdtype(dtype, np.integer):
            feeds[value.name] = rng.integers(0, _vocab_size(graph, value.name), shape).astype(dtype)
        else:
            raise ValueError(f"input {value.name!r} has unsupported dtype {dtype}")
    return feeds
