"""Traced shape ops with torch's conventions: reshape/view, flatten, transpose, permute, squeeze, unsqueeze,
expand, repeat, cat, stack, split, chunk. Shapes are static, so every size is computed here and given to the ONNX
op as a constant (a Reshape never sees a -1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._math import common
from ._state import current

__all__ = [
    "cat",
    "chunk",
    "expand",
    "flatten",
    "permute",
    "repeat",
    "reshape",
    "sizes",
    "split",
    "squeeze",
    "stack",
    "transpose",
    "unsqueeze",
]


def sizes(args: tuple) -> tuple[int, ...]:
    """`reshape(2, 3)` and `reshape((2, 3))` alike: the sizes as a tuple of ints."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    tr = current()
    for a in args:
        if tr.is_tensor(a):
            raise tr.error("a size given as a traced tensor: sizes must be Python ints (shapes are static)")
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise tr.error(f"sizes must be ints, got {a!r} in {list(args)}")
    return tuple(int(a) for a in args)


def reshape(x: Any, shape: Sequence[int]) -> Any:
    """torch.reshape / view: one -1 at most, inferred from the element count."""
    tr = current()
    t = tr.lift(x)
    shape = [int(s) for s in shape]
    count = int(np.prod(t.shape, dtype=np.int64))
    known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
    if shape.count(-1) > 1 or any(s < -1 for s in shape):
        raise tr.error(f"cannot reshape {list(t.shape)} to {shape}: at most one -1 and no other negative size")
    if -1 in shape:
        if known == 0 or count % known:
            raise tr.error(f"cannot reshape {list(t.shape)} ({count} elements) to {shape}")
        shape[shape.index(-1)] = count // known
    elif known != count:
        raise tr.error(f"cannot reshape {list(t.shape)} ({count} elements) to {shape} ({known} elements)")
    if tuple(shape) == t.shape:
        return t
    return tr.op("Reshape", t, tr.ints(shape))


def flatten(x: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    """torch.flatten: dims start_dim..end_dim (inclusive) become one."""
    tr = current()
    t = tr.lift(x)
    if t.ndim == 0:
        return reshape(t, [1])
    a, b = tr.axis(start_dim, t.ndim), tr.axis(end_dim, t.ndim)
    if a > b:
        raise tr.error(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    s = t.shape
    return reshape(t, [*s[:a], int(np.prod(s[a : b + 1], dtype=np.int64)), *s[b + 1 :]])


def permute(x: Any, dims: Sequence[int]) -> Any:
    """torch.permute: output dim i is input dim dims[i]."""
    tr = current()
    t = tr.lift(x)
    perm = [tr.axis(d, t.ndim) for d in dims]
    if sorted(perm) != list(range(t.ndim)):
        raise tr.error(f"permute{tuple(dims)} is not a permutation of the {t.ndim} dims of {list(t.shape)}")
    if perm == list(range(t.ndim)):
        return t
    return tr.op("Transpose", t, perm=perm)


def transpose(x: Any, dim0: int, dim1: int) -> Any:
    """torch.transpose: swaps two dims."""
    tr = current()
    t = tr.lift(x)
    perm = list(range(t.ndim))
    a, b = tr.axis(dim0, t.ndim), tr.axis(dim1, t.ndim)
    perm[a], perm[b] = perm[b], perm[a]
    return permute(t, perm)


def squeeze(x: Any, dim: int | Sequence[int] | None = None) -> Any:
    """torch.squeeze: drops size-1 dims (all, or those of `dim`; a named dim whose size is not 1 stays)."""
    tr = current()
    t = tr.lift(x)
    if dim is None:
        axes = [i for i, s in enumerate(t.shape) if s == 1]
    else:
        dims = [dim] if isinstance(dim, (int, np.integer)) else list(dim)
        axes = sorted({tr.axis(d, max(t.ndim, 1)) for d in dims})
        axes = [a for a in axes if a < t.ndim and t.shape[a] == 1]
    return tr.op("Squeeze", t, tr.ints(axes)) if axes else t


def unsqueeze(x: Any, dim: int) -> Any:
    """torch.unsqueeze: a new size-1 dim at `dim` (-1 appends)."""
    tr = current()
    t = tr.lift(x)
    return tr.op("Unsqueeze", t, tr.ints([tr.axis(dim, t.ndim + 1)]))


def expand(x: Any, shape: Sequence[int]) -> Any:
    """torch.expand: size-1 dims broadcast to `shape` (-1 keeps a dim); new dims may lead."""
    tr = current()
    t = tr.lift(x)
    shape = [int(s) for s in shape]
    lead = len(shape) - t.ndim
    if lead < 0:
        raise tr.error(f"expand: {shape} has fewer dims than the tensor {list(t.shape)}")
    out = []
    for i, s in enumerate(shape):
        have = t.shape[i - lead] if i >= lead else None
        if s == -1:
            if have is None:
                raise tr.error(f"expand: -1 is not allowed for the new leading dim {i} of {shape}")
            s = have
        if have not in (None, 1, s):
            raise tr.error(f"cannot expand {list(t.shape)} to {shape}: dim {i} has size {have}, not 1")
        out.append(s)
    if tuple(out) == t.shape:
        return t
    return tr.op("Expand", t, tr.ints(out))


def repeat(x: Any, reps: Sequence[int]) -> Any:
    """torch Tensor.repeat: tiles the tensor `reps` times along each dim (extra leading reps add dims)."""
    tr = current()
    t = tr.lift(x)
    reps = [int(r) for r in reps]
    if len(reps) < t.ndim:
        raise tr.error(f"repeat: {reps} has fewer dims than the tensor {list(t.shape)}")
    if len(reps) > t.ndim:
        t = reshape(t, [1] * (len(reps) - t.ndim) + list(t.shape))
    return tr.op("Tile", t, tr.ints(reps))


def cat(tensors: Sequence[Any], dim: int = 0) -> Any:
    """torch.cat: joins tensors along an existing dim (one dtype: promoted as arithmetic does)."""
    tr = current()
    ts = common(*tensors) if len(tensors) else []
    if not ts:
        raise tr.error("cat of an empty sequence")
    if len(ts) == 1:
        return ts[0]
    return tr.op("Concat", *ts, axis=tr.axis(dim, ts[0].ndim))


def stack(tensors: Sequence[Any], dim: int = 0) -> Any:
    """torch.stack: joins same-shape tensors along a new dim."""
    tr = current()
    ts = common(*tensors) if len(tensors) else []
    if not ts:
        raise tr.error("stack of an empty sequence")
    shapes = {t.shape for t in ts}
    if len(shapes) > 1:
        raise tr.error(f"stack needs tensors of one shape, got {[list(s) for s in shapes]}")
    axis = tr.axis(dim, ts[0].ndim + 1)
    return cat([unsqueeze(t, axis) for t in ts], axis)


def split(x: Any, split_size_or_sections: int | Sequence[int], dim: int = 0) -> tuple:
    """torch.split: pieces of `split_size` along `dim` (the last may be smaller), or of the given sections."""
    tr = current()
    t = tr.lift(x)
    axis = tr.axis(dim, t.ndim)
    n = t.shape[axis]
    if isinstance(split_size_or_sections, (int, np.integer)):
        size = int(split_size_or_sections)
        if size <= 0:
            raise tr.error(f"split size must be positive, got {size}")
        parts = [size] * (n // size) + ([n % size] if n % size else [])
    else:
        parts = [int(p) for p in split_size_or_sections]
        if sum(parts) != n or any(p < 0 for p in parts):
            raise tr.error(f"split sections {parts} do not add up to the size {n} of dim {dim}")
    if len(parts) == 1:
        return (t,)
    return tuple(tr.op("Split", t, tr.ints(parts), axis=axis, n_out=len(parts)))


def chunk(x: Any, chunks: int, dim: int = 0) -> tuple:
    """torch.chunk: at most `chunks` pieces of ceil(size / chunks) along `dim`."""
    tr = current()
    t = tr.lift(x)
    if chunks <= 0:
        raise tr.error(f"chunk needs a positive number of chunks, got {chunks}")
    n = t.shape[tr.axis(dim, t.ndim)]
    return split(t, max(-(-n // chunks), 1), dim)
