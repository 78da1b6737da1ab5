"""Traced `tensor[index]`: ints, slices (negative steps too), None, Ellipsis and one integer tensor index.

Steps: expand the Ellipsis; one Slice for every sliced dim (ints are one-element slices); a Gather for a tensor
index; one Squeeze for the int dims (torch selects them, so they never move the tensor index's dims); one
Unsqueeze for the Nones, at their places in the output.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._state import current

__all__ = ["getitem"]

_FAR_BACK = -(2**63)  # an ONNX Slice end before index 0, for negative steps


def _is_index_tensor(tr, item: Any) -> bool:
    return tr.is_tensor(item) or isinstance(item, (list, np.ndarray))


def getitem(x: Any, index: Any) -> Any:
    """x[index] with torch's (basic indexing plus one tensor index) semantics."""
    tr = current()
    t = tr.lift(x)
    items = list(index) if isinstance(index, tuple) else [index]
    for item in items:
        if isinstance(item, (bool, np.bool_)) or (tr.is_tensor(item) and item.dtype == bool):
            raise tr.error("boolean mask indexing gives a data-dependent shape; use where() instead")
    used = sum(1 for i in items if i is not None and i is not Ellipsis)
    if items.count(Ellipsis) > 1:
        raise tr.error("an index can hold only one Ellipsis (...)")
    if used > t.ndim:
        raise tr.error(f"too many indices ({used}) for a tensor of {t.ndim} dims {list(t.shape)}")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at : at + 1] = [slice(None)] * (t.ndim - used)
    else:
        items += [slice(None)] * (t.ndim - used)

    starts, ends, axes, steps = [], [], [], []
    squeeze, gather, nones, out_pos, dim = [], None, [], 0, 0
    for item in items:
        if item is None:
            nones.append(out_pos)
            out_pos += 1
            continue
        n = t.shape[dim]
        if isinstance(item, (int, np.integer)):
            i = int(item)
            if not -n <= i < n:
                raise tr.error(f"index {i} is out of bounds for dim {dim} of size {n}")
            i %= n
            starts.append(i), ends.append(i + 1), axes.append(dim), steps.append(1)
            squeeze.append(dim)
        elif isinstance(item, slice):
            for part in (item.start, item.stop, item.step):
                if tr.is_tensor(part):
                    raise tr.error("slice bounds must be Python ints (shapes are static), not traced tensors")
            start, stop, step = item.indices(n)
            if (start, stop, step) != (0, n, 1):
                if step < 0 and stop < 0:
                    stop = _FAR_BACK
                starts.append(start), ends.append(stop), axes.append(dim), steps.append(step)
            out_pos += 1
        elif _is_index_tensor(tr, item):
            if gather is not None:
                raise tr.error("only one tensor index per indexing expression is supported")
            idx = tr.lift(np.asarray(item, np.int64) if not tr.is_tensor(item) else item)
            if idx.dtype.kind not in "iu":
                raise tr.error(f"a tensor index must hold integers, not {idx.dtype}")
            gather = (dim, idx)
            out_pos += idx.ndim
        else:
            raise tr.error(f"unsupported index {item!r} ({type(item).__name__})")
        dim += 1
    if starts:
        t = tr.op("Slice", t, tr.ints(starts), tr.ints(ends), tr.ints(axes), tr.ints(steps))
    if gather is not None:
        gdim, idx = gather
        t = tr.op("Gather", t, idx, axis=gdim)
        squeeze = [d if d < gdim else d + idx.ndim - 1 for d in squeeze]
    if squeeze:
        t = tr.op("Squeeze", t, tr.ints(squeeze))
    if nones:
        t = tr.op("Unsqueeze", t, tr.ints(nones))
    return t
