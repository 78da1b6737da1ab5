"""Checkpoints in and out: safetensors and torch .pt/.pth files read into {name: array}, key remapping, the one
mismatch error, and safetensors written with PyTorch's names.

The reader parses safetensors itself (an 8-byte header length, a JSON header, the raw data), so float16 and
bfloat16 tensors arrive without numpy knowing bfloat16; both become float32 when loaded into a float32 module.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import struct
from collections import namedtuple
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import save

from ..errors import WeightsError
from ..files import write_atomic

__all__ = ["IncompatibleKeys", "load_into", "read_checkpoint", "read_safetensors", "remap_keys", "write_safetensors"]

IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])  # as torch returns

_DTYPES = {
    "F16": np.float16,
    "F32": np.float32,
    "F64": np.float64,
    "I8": np.int8,
    "I16": np.int16,
    "I32": np.int32,
    "I64": np.int64,
    "U8": np.uint8,
    "U16": np.uint16,
    "U32": np.uint32,
    "U64": np.uint64,
    "BOOL": np.bool_,
}


def read_safetensors(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """Every tensor of a .safetensors file by name (bfloat16 as float32); a bad file is a WeightsError."""
    path = Path(path)
    if not path.is_file():
        raise WeightsError(f"{path}: no such file")
    raw = path.read_bytes()
    try:
        (size,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8 : 8 + size])
        if not isinstance(header, dict):
            raise ValueError("the header is not a JSON object")
    except (struct.error, ValueError, UnicodeDecodeError) as exc:
        raise WeightsError(f"{path}: not a safetensors file ({exc})") from None
    data = memoryview(raw)[8 + size :]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, shape, (begin, end) = info["dtype"], tuple(info["shape"]), info["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise WeightsError(f"{path}: tensor {name!r} has a malformed header entry {info!r}") from None
        count = int(np.prod(shape, dtype=np.int64))
        if dtype == "BF16":
            bits = np.frombuffer(data[begin:end], np.uint16)
            arr = (bits.astype(np.uint32) << 16).view(np.float32)
        elif dtype in _DTYPES:
            arr = np.frombuffer(data[begin:end], _DTYPES[dtype])
        else:
            raise WeightsError(f"{path}: tensor {name!r} has dtype {dtype}, which burnedge cannot load")
        if arr.size != count or end > len(data):
            raise WeightsError(f"{path}: tensor {name!r} {list(shape)} is truncated ({arr.size} of {count} values)")
        out[name] = arr.reshape(shape).copy()
    return out


def _unwrap(obj: Any, path: Path) -> Mapping[str, Any]:
    """The state dict inside a torch checkpoint (`{"state_dict": ...}` / `{"model": ...}` wrappers too)."""
    if isinstance(obj, Mapping) and not all(hasattr(v, "detach") for v in obj.values()):
        for key in ("state_dict", "model_state_dict", "model"):
            if isinstance(obj.get(key), Mapping):
                return _unwrap(obj[key], path)
        bad = sorted(k for k, v in obj.items() if not hasattr(v, "detach"))
        raise WeightsError(f"{path}: not a state dict of tensors (entries {bad[:5]} are not tensors)")
    if not isinstance(obj, Mapping):
        raise WeightsError(f"{path}: holds a {type(obj).__name__}, not a state dict")
    return obj


def _read_torch(path: Path) -> dict[str, np.ndarray]:
    try:
        import torch
    except ImportError:
        raise WeightsError(
            f"{path}: .pt/.pth checkpoints are read with torch, which is not installed (pip install torch, "
            "or save the state dict as safetensors)"
        ) from None
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types: a pickle error, an unsafe global, a zip error
        raise WeightsError(f"{path}: torch cannot load it as weights ({type(exc).__name__}: {exc})") from None
    out = {}
    for name, t in _unwrap(obj, path).items():
        t = t.detach().cpu()
        if t.dtype in (torch.float16, torch.bfloat16):
            t = t.float()
        out[name] = t.numpy().copy()
    return out


def read_checkpoint(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """A weights file by suffix: .safetensors, or .pt/.pth/.bin through torch."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".pt", ".pth", ".bin", ".ckpt"):
        if not path.is_file():
            raise WeightsError(f"{path}: no such file")
        return _read_torch(path)
    return read_safetensors(path)


def remap_keys(
    state: Mapping[str, Any], remap: Mapping[str, str] | Iterable[tuple[str, str]] | None, source: str
) -> dict[str, Any]:
    """Keys rewritten by each (regex, replacement) pair in turn (re.sub); two keys landing on one is an error."""
    if not remap:
        return dict(state)
    pairs = list(remap.items()) if isinstance(remap, Mapping) else [tuple(p) for p in remap]
    try:
        rules = [(re.compile(p), r) for p, r in pairs]
    except (re.error, ValueError, TypeError) as exc:
        raise WeightsError(f"{source}: bad remap rule ({exc}); remap takes (regex, replacement) pairs") from None
    out: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for key, value in state.items():
        new = key
        for pattern, repl in rules:
            new = pattern.sub(repl, new)
        if new in out:
            raise WeightsError(f"{source}: remap maps both {origin[new]!r} and {key!r} to {new!r}")
        out[new], origin[new] = value, key
    return out


def _as_array(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):  # a torch tensor, read without importing torch
        value = value.detach().cpu()
        if str(value.dtype) in ("torch.float16", "torch.bfloat16"):
            value = value.float()
        return value.numpy()
    return np.asarray(value)


def load_into(
    slots: Mapping[str, Any], state: Mapping[str, Any], strict: bool, source: str, owner: str
) -> IncompatibleKeys:
    """Copies `state` into the module's Parameters and Buffers (`slots`: name -> Stored), each cast to the
    slot's dtype as torch's copy does. Every mismatch is gathered into one WeightsError: missing and
    unexpected keys (when `strict`), and shape mismatches with both shapes (always, as in torch)."""
    arrays = {k: _as_array(v) for k, v in state.items()}
    missing = [k for k in slots if k not in arrays]
    unexpected = [k for k in arrays if k not in slots]
    wrong = [k for k in slots if k in arrays and tuple(arrays[k].shape) != slots[k].shape]
    problems = []
    if strict and missing:
        problems.append(f"{len(missing)} missing key(s): " + ", ".join(map(repr, missing)))
    if strict and unexpected:
        hints = []
        for k in unexpected:
            close = difflib.get_close_matches(k, missing, n=1, cutoff=0.6)
            hints.append(f"{k!r} (renamed {close[0]!r}?)" if close else repr(k))
        problems.append(f"{len(unexpected)} unexpected key(s): " + ", ".join(hints))
    if wrong:
        problems.append(
            f"{len(wrong)} shape mismatch(es): "
            + ", ".join(
                f"{k!r} is {list(arrays[k].shape)} in the checkpoint, {list(slots[k].shape)} in the module"
                for k in wrong
            )
        )
    if problems:
        raise WeightsError(f"{source}: the checkpoint does not fit {owner}: " + "; ".join(problems))
    for name, slot in slots.items():
        if name in arrays:
            arr = arrays[name]
            slot.data = np.ascontiguousarray(arr if arr.dtype == slot.dtype else arr.astype(slot.dtype))
    return IncompatibleKeys(missing, unexpected)


def write_safetensors(path: str | os.PathLike[str], state: Mapping[str, np.ndarray]) -> Path:
    """Writes `state` as a safetensors file (atomically; metadata format "pt", as torch's savers write)."""
    arrays = {k: np.ascontiguousarray(v) for k, v in state.items()}
    return write_atomic(path, save(arrays, metadata={"format": "pt"}))
