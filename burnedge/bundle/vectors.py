"""Test vectors: seeded example inputs for a graph, and the .npz members (fixed timestamps) that carry them.

A vector member `vectors/<i>.npz` holds `in_<k>` (input k) and `out_<k>` (the reference's output k), in the
manifest's order of inputs and outputs.
"""

from __future__ import annotations

import io
import math
import zipfile
from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import BundleError
from ..ir import Graph

__all__ = ["as_declared", "bit_exact", "decode_npz", "encode_npz", "example_inputs", "typed"]


def bit_exact(manifest: Mapping) -> bool:
    """An int8 bundle whose every op runs in int8: its outputs are the reference's, bit for bit, on any target."""
    q = manifest.get("quantization")
    return bool(q) and not q.get("kept_float")


def example_inputs(graph: Graph, seed: int = 0) -> dict[str, np.ndarray]:
    """Deterministic random inputs of the right shapes and dtypes: floats ~ N(0, 1), booleans fair coins, integers
    in [0, 2) or, for the indices of a Gather, in [0, size of the gathered axis), and for an integer divisor
    (Div's or Mod's second input) in [1, 3): ONNX leaves x / 0 undefined, so a vector never asks for it."""
    rng = np.random.default_rng(seed)
    bound: dict[str, int] = {}
    divisors = {n.inputs[1] for n in graph.nodes if n.op_type in ("Div", "Mod") and len(n.inputs) > 1}
    for node in graph.nodes:
        if node.op_type in ("Gather", "GatherElements") and len(node.inputs) > 1 and node.inputs[1] in graph.inputs:
            shape = graph.values[node.inputs[0]].shape
            if shape:
                dim = shape[int(node.attrs.get("axis", 0)) % len(shape)]
                bound[node.inputs[1]] = min(bound.get(node.inputs[1], dim), dim)
    feeds = {}
    for name in graph.inputs:
        v = graph.values[name]
        if v.dtype.kind == "f":
            feeds[name] = rng.standard_normal(v.shape).astype(v.dtype)
        elif v.dtype.kind == "b":
            feeds[name] = rng.random(v.shape) < 0.5
        elif v.dtype.kind in "iu":
            low = 1 if name in divisors else 0
            feeds[name] = rng.integers(low, max(bound.get(name, 2), 1) + low, v.shape).astype(v.dtype)
        else:
            raise BundleError(f"cannot make test inputs for input {name!r} of dtype {v.dtype}")
    return {name: np.asarray(arr) for name, arr in feeds.items()}  # a 0-d draw comes back as a numpy scalar


def encode_npz(arrays: dict[str, np.ndarray]) -> bytes:
    """An .npz archive with fixed timestamps (np.savez stamps the current time, which breaks reproducibility)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for key, arr in arrays.items():
            member = io.BytesIO()
            arr = np.asarray(arr)  # np.ascontiguousarray alone turns a 0-d array (a scalar input) into shape (1,)
            np.lib.format.write_array(member, np.ascontiguousarray(arr).reshape(arr.shape), allow_pickle=False)
            zf.writestr(zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0)), member.getvalue())
    return buf.getvalue()


def as_declared(arrays: Mapping[str, np.ndarray], shapes: Mapping[str, Sequence[int]]) -> dict[str, np.ndarray]:
    """`arrays` with each 0-d tensor back in shape (): bundles written before encode_npz kept scalars stored them
    as shape (1,)."""
    out = dict(arrays)
    for name, shape in shapes.items():
        arr = out.get(name)
        if arr is not None and len(shape) == 0 and arr.shape == (1,):
            out[name] = arr.reshape(())
    return out


def decode_npz(data: bytes, name: str = "an .npz member") -> dict[str, np.ndarray]:
    """The arrays of an .npz archive, each checked before it is read: stored (a deflated array could inflate to
    any size) and its header's shape no larger than its bytes (np.load allocates what the header claims);
    anything else (a damaged or encrypted archive, a pickle, not an .npz) is a BundleError."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for info in zf.infolist():
                if info.compress_type != zipfile.ZIP_STORED or info.file_size > len(data):
                    raise BundleError(f"{name}: array {info.filename!r} is compressed or larger than its archive")
                with zf.open(info) as f:
                    version = np.lib.format.read_magic(f)
                    read_header = getattr(np.lib.format, f"read_array_header_{version[0]}_0", None)
                    if read_header is None:
                        raise ValueError(f"unknown .npy format version {version}")
                    shape, _, dtype = read_header(f)
                if math.prod(shape) * dtype.itemsize > info.file_size:
                    raise BundleError(f"{name}: array {info.filename!r} claims shape {list(shape)}, more than it holds")
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, RuntimeError, NotImplementedError) as exc:
        raise BundleError(f"{name}: not a readable .npz archive ({type(exc).__name__}: {exc})") from None


def typed(arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A test-vector array as the manifest types it: .npz keeps ml_dtypes arrays (bfloat16, float8, int4...) as
    raw bytes of the same width ('V1', 'V2'), which are viewed back as their type."""
    if arr.dtype.kind == "V" and arr.dtype != dtype and arr.dtype.itemsize == dtype.itemsize:
        return arr.view(dtype)
    return arr
