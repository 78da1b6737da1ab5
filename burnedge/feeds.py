"""What goes into a model and what comes out: the one check of feeds against a model's inputs, and the one
comparison of an output with its reference (the accuracy contract every backend is held to)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .errors import InputError

__all__ = ["Check", "check_feeds", "compare", "lossless"]


class _Info(Protocol):
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype


def check_feeds(
    inputs: Sequence[_Info],
    feeds: Any,
    where: str = "",
    convert: Callable[[str, np.ndarray], np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """The feeds as arrays by input name, after checking that the names are exactly the model's inputs and every
    shape and dtype is the expected one; each error is an InputError naming the input, the expected and the actual
    value (and `where`: which batch or vector). `convert(name, array)` may first turn an array into the input's
    type (a lossless conversion the caller allows)."""
    at = f" in {where}" if where else ""
    if not isinstance(feeds, Mapping):
        raise InputError(f"expected a dict of input arrays{at}, got {type(feeds).__name__}")
    expected = {i.name: i for i in inputs}
    for kind, names in (("unknown", set(feeds) - set(expected)), ("missing", set(expected) - set(feeds))):
        if names:
            names = sorted(names, key=str)
            what = f"input {names[0]!r}" if len(names) == 1 else f"inputs {names}"
            raise InputError(f"{kind} {what}{at}; the model's inputs are {sorted(expected)}")
    out = {}
    for name, info in expected.items():
        arr = feeds[name] if isinstance(feeds[name], np.ndarray) else np.asarray(feeds[name])
        if convert is not None:
            arr = convert(name, arr)
        if arr.dtype != info.dtype:
            raise InputError(f"input {name!r}{at}: expected dtype {info.dtype}, got {arr.dtype}")
        if tuple(arr.shape) != tuple(info.shape):
            raise InputError(f"input {name!r}{at}: expected shape {list(info.shape)}, got {list(arr.shape)}")
        out[name] = arr
    return out


def lossless(arr: np.ndarray, dtype: np.dtype, where: str) -> np.ndarray:
    """`arr` as `dtype` when that loses nothing (every value survives the round trip: a float64 array of values
    float32 holds exactly, integers that fit, integral floats for an integer type); else an InputError at `where`."""
    arr, dtype = np.asarray(arr), np.dtype(dtype)
    if arr.dtype == dtype:
        return arr
    if dtype.kind in "fiub" and arr.dtype.kind in "fiub" and (dtype.kind != "b" or arr.dtype.kind == "b"):
        with np.errstate(all="ignore"):
            if dtype.kind in "iu" and arr.size:
                info = np.iinfo(dtype)
                lo, hi = arr.min(), arr.max()
                if not (np.isfinite(lo) and np.isfinite(hi) and info.min <= lo and hi <= info.max):
                    raise InputError(f"{where}: values [{lo}, {hi}] do not fit {dtype}")
            out = arr.astype(dtype)
            back = out.astype(arr.dtype)
            same = (back == arr) | (np.isnan(arr) & np.isnan(back)) if arr.dtype.kind == "f" else back == arr
            if np.all(same):
                return out
        bad = arr[~same].flat[0]
        raise InputError(
            f"{where}: expected {dtype}, got {arr.dtype} values it cannot hold exactly (e.g. {bad.item()})"
        )
    raise InputError(f"{where}: expected dtype {dtype}, got {arr.dtype}")


@dataclass(frozen=True)
class Check:
    """One output of one test vector: the largest absolute error, that error relative to max |reference|, ok."""

    vector: int
    output: str
    max_abs: float
    relative: float
    ok: bool
    allowed: float = 0.0  # beyond the tolerance: the max abs error rounding alone explains (see verifier), if any


def compare(got: np.ndarray, ref: np.ndarray, tolerance: float = 1e-4) -> tuple[float, float, bool]:
    """(max abs error, relative error, ok): floats relative to max |ref| (NaN and inf must match position for
    position), integers and booleans exactly."""
    if got.shape != ref.shape or got.dtype != ref.dtype:
        return float("inf"), float("inf"), False
    if ref.size == 0:
        return 0.0, 0.0, True
    g, r = got.astype(np.float64), ref.astype(np.float64)
    if ref.dtype.kind != "f":
        diff = float(np.max(np.abs(g - r)))
        return diff, diff, diff == 0
    inf = np.isinf(r)
    if not np.array_equal(np.isnan(g), np.isnan(r)) or not np.array_equal(g[inf], r[inf]):
        return float("inf"), float("inf"), False
    finite = np.isfinite(r)
    if not finite.any():
        return 0.0, 0.0, True
    diff = float(np.max(np.abs(g[finite] - r[finite])))
    rel = diff / max(float(np.max(np.abs(r[finite]))), 1e-30)
    return diff, rel, rel <= tolerance
