"""Calibration data from files: a folder of .npy/.npz files or one .npz, checked against the model's inputs.

The rule (also in the README):

- an ``.npz`` holds arrays named by input name. Each array either has the input's exact shape (the file is one
  feed dict) or one extra leading axis, the same length N in every array of the file (the file is N feed dicts,
  sample i taking index i of every array);
- an ``.npy`` is for a model with one (non-constant) input: the input's exact shape (one feed dict) or with one
  extra leading axis (N feed dicts);
- for an input whose batch (first) dimension is 1, a natural batch of N also works: an array of shape
  ``(N, *shape[1:])`` (``(64, 1, 28, 28)`` for an input ``[1, 1, 28, 28]``) is N samples of batch 1;
- a folder: its .npy and .npz files, in sorted file-name order (other files are ignored; subfolders are not read).

Values are converted to the input's dtype when that loses nothing: any float or integer array for a float input
(float64 -> float32 rounds as the model will), integers within range for an integer input. Anything else (a
missing or unknown input name, a wrong shape, an empty folder, an unreadable file) raises InputError naming the
file and the input.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..files import require_regular
from ..ir import Graph

__all__ = ["load_calibration"]


def _convert(arr: np.ndarray, dtype: np.dtype, where: str) -> np.ndarray:
    if arr.dtype == dtype:
        return arr
    if dtype.kind == "f" and arr.dtype.kind in "fiub":
        return arr.astype(dtype)
    if dtype.kind in "iu" and arr.dtype.kind in "iub":
        info = np.iinfo(dtype)
        if arr.size and (int(arr.min()) < info.min or int(arr.max()) > info.max):
            raise InputError(f"{where}: values [{arr.min()}, {arr.max()}] do not fit {dtype}")
        return arr.astype(dtype)
    if dtype.kind == "b" and arr.dtype.kind == "b":
        return arr
    raise InputError(f"{where}: expected {dtype} data, got {arr.dtype}")


def _samples(arrays: dict[str, np.ndarray], graph: Graph, file: str) -> list[dict[str, np.ndarray]]:
    """The feed dicts of one file's arrays (by input name), per the rule in the module docstring."""
    arrays, names = dict(arrays), list(graph.inputs)
    unknown = sorted(set(arrays) - set(names))
    if unknown:
        raise InputError(f"{file}: unknown input(s) {unknown}; the model's inputs are {names}")
    missing = [n for n in names if n not in arrays]
    if missing:
        raise InputError(f"{file}: missing input(s) {missing}; the model's inputs are {names}")
    counts = {}
    for n in names:
        shape, got = tuple(graph.values[n].shape), tuple(arrays[n].shape)
        if len(got) == len(shape) > 0 and shape[0] == 1 and got[1:] == shape[1:] and got[0] != 1:
            arrays[n] = arrays[n].reshape(got[0], *shape)  # a natural batch of N for a batch-1 input: N samples
            got = tuple(arrays[n].shape)
        if got == shape:
            counts[n] = None
        elif got[1:] == shape:
            counts[n] = got[0]
        else:
            raise InputError(
                f"{file}: input {n!r} has shape {list(got)}; expected {list(shape)} (one sample) or "
                f"[N, {', '.join(map(str, shape))}] (N samples)"
                + (f" or [N, {', '.join(map(str, shape[1:]))}] (a batch of N)" if shape and shape[0] == 1 else "")
            )
    batched = {c for c in counts.values()}
    if len(batched) != 1:
        raise InputError(f"{file}: mixes single samples and batches of different lengths: {counts}")
    n = batched.pop()
    conv = {k: _convert(arrays[k], graph.values[k].dtype, f"{file}: input {k!r}") for k in names}
    if n is None:
        return [conv]
    if n == 0:
        raise InputError(f"{file}: holds 0 samples")
    return [{k: np.ascontiguousarray(conv[k][i]) for k in names} for i in range(n)]


def _read(path: Path, graph: Graph) -> list[dict[str, np.ndarray]]:
    require_regular(path, InputError, "calibration file")
    try:
        if path.suffix.lower() == ".npz":
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
        else:
            if len(graph.inputs) != 1:
                raise InputError(
                    f"{path}: a .npy file feeds a model with one input; this model has {list(graph.inputs)} "
                    "(use .npz files with one array per input name)"
                )
            arrays = {graph.inputs[0]: np.load(path, allow_pickle=False)}
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read calibration file {path}: {exc}") from None
    return _samples(arrays, graph, str(path))


def load_calibration(
    path: str | os.PathLike[str], graph: Graph, what: str = "calibration"
) -> list[dict[str, np.ndarray]]:
    """The feed dicts in `path` (a folder of .npy/.npz files or one .npz/.npy file), in a fixed order; `what` names
    the data in the errors ("validation" for --validation)."""
    p = require_regular(path, InputError, f"{what} data", folder=True)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if not f.is_dir() and f.suffix.lower() in (".npy", ".npz"))
        if not files:
            raise InputError(f"{what} folder {p} holds no .npy or .npz file")
    elif p.is_file():
        if p.suffix.lower() not in (".npy", ".npz"):
            raise InputError(f"{what} data {p}: expected a folder, a .npz or a .npy file")
        files = [p]
    else:
        raise InputError(f"{what} data {p} does not exist")
    out: list[dict[str, np.ndarray]] = []
    for f in files:
        out.extend(_read(f, graph))
    return out
