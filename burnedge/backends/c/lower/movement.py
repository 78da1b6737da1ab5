"""Data movement lowerings (Transpose, Slice, Concat, Split, Expand, Tile, Pad, DepthToSpace, SpaceToDepth): strided
copies whose strides are computed here from the constant shapes.

Every op here is out[i] = in[affine(i)] (or a fill): the lowering describes the affine map as a shape with an
element stride per dim for each side, and `copy_code` makes it cheap in C before emitting it:

1. elements wider than 8 bytes become an extra inner dim of 8-, 4-, 2- or 1-byte units;
2. size-1 dims go; the dims are ordered by output stride (the loop order of a copy is free);
3. adjacent dims that are contiguous on both sides are merged;
4. what is left is one `memcpy` when both sides are dense, else one `be_copy_nd` call (kernels/copy.c), which
   copies rows with memcpy or typed strided loops and tiles transposes.

Pad (and nearest Resize, in resize.py) map each output index per dim through a table: `table_code`.
"""

from __future__ import annotations

import numpy as np

from ....ir import Node
from . import Ctx, lower


def dense_strides(shape: tuple[int, ...] | list[int]) -> list[int]:
    """Row-major element strides of `shape`."""
    strides, acc = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = acc
        acc *= max(int(shape[d]), 1)
    return strides


def attrs(node: Node) -> dict:
    """The node's attributes over the op's defaults."""
    return {**node.op.attrs, **node.attrs}


def ints(a) -> list[int]:
    return [int(v) for v in np.asarray(a).reshape(-1)]


def _arr(values: list[int]) -> str:
    return "{" + ", ".join(str(int(v)) for v in values) + "}"


def _ptr(base: str, byte_offset: int) -> str:
    return f"({base} + {byte_offset})" if byte_offset else base


def copy_code(
    dst: str,
    src: str,
    itemsize: int,
    shape: list[int],
    out_strides: list[int],
    in_strides: list[int],
    out_offset: int = 0,
    in_offset: int = 0,
) -> str:
    """C statements copying dst[out_offset + sum i*os] = src[in_offset + sum i*is] over `shape`.

    `dst` and `src` are byte-pointer expressions; strides and offsets count elements of `itemsize` bytes.
    """
    if any(int(n) == 0 for n in shape):
        return "/* empty copy */"
    unit = next(u for u in (8, 4, 2, 1) if itemsize % u == 0)
    k = itemsize // unit
    dims = [(int(n), int(o) * k, int(i) * k) for n, o, i in zip(shape, out_strides, in_strides) if int(n) != 1]
    if k > 1:
        dims.append((k, 1, 1))
    out_offset, in_offset = out_offset * itemsize, in_offset * itemsize
    dims.sort(key=lambda t: (-abs(t[1]), -abs(t[2])))
    merged: list[list[int]] = []
    for n, o, i in dims:
        if merged and merged[-1][1] == o * n and merged[-1][2] == i * n:
            merged[-1] = [merged[-1][0] * n, o, i]
        else:
            merged.append([n, o, i])
    if not merged:
        merged = [[1, 1, 1]]
    dst, src = _ptr(dst, out_offset), _ptr(src, in_offset)
    if len(merged) == 1 and merged[0][1] == 1 and merged[0][2] == 1:
        return f"memcpy({dst}, {src}, {merged[0][0] * unit});"
    # a transpose: put the dim the input walks contiguously second-last (its output stride is not 1)
    if merged[-1][2] != 1:
        j = next((d for d, m in enumerate(merged[:-1]) if m[2] == 1), None)
        if j is not None:
            merged.append(merged.pop(j))
            merged[-2], merged[-1] = merged[-1], merged[-2]
    shape_s, os_s, is_s = (_arr([m[c] for m in merged]) for c in range(3))
    return (
        f"{{ static const int64_t sh[] = {shape_s}, os[] = {os_s}, is[] = {is_s};\n"
        f"  be_copy_nd({dst}, {src}, {unit}, {len(merged)}, sh, os, is, threads); }}"
    )


def table_code(
    ctx: Ctx, key: str, dst: str, src: str, itemsize: int, shape: list[int], tables: list[np.ndarray], fill: str
) -> str:
    """C statements for out[i] = src[sum_d tables[d][i_d]] (elements; a negative entry means `fill`) over `shape`.

    Adjacent dims whose tables are plain ranges over dense input are merged first; the tables are packed as a
    constant under `key`.
    """
    if any(int(n) == 0 for n in shape):
        return "/* empty */"
    dims = [(int(n), np.asarray(t, np.int64)) for n, t in zip(shape, tables) if int(n) != 1 or t[0] != 0]
    if not dims:
        dims = [(1, np.zeros(1, np.int64))]
    merged: list[tuple[int, np.ndarray]] = [dims[0]]
    for n, t in dims[1:]:
        pn, pt = merged[-1]
        step = int(t[1] - t[0]) if n > 1 else 1
        plain = (t >= 0).all() and (pt >= 0).all() and np.array_equal(t, np.arange(n, dtype=np.int64) * step)
        if plain and np.array_equal(pt, np.arange(pn, dtype=np.int64) * step * n):
            merged[-1] = (pn * n, np.arange(pn * n, dtype=np.int64) * step)
        else:
            merged.append((n, t))
    unit = next(u for u in (8, 4, 2, 1) if itemsize % u == 0)
    if unit != itemsize:  # wide elements: one more dim of units
        k = itemsize // unit
        merged = [(n, np.where(t < 0, -1, t * k)) for n, t in merged] + [(k, np.arange(k, dtype=np.int64))]
    last = merged[-1][1]
    lo, hi = _longest_run(last)
    all_tables = np.concatenate([t for _, t in merged]).astype(np.int64)
    fill_arg = fill if (all_tables < 0).any() else "NULL"
    if (all_tables >= 0).all() and len(merged) == 1 and lo == 0 and hi == merged[0][0] and last[0] == 0:
        return f"memcpy({dst}, {src}, {merged[0][0] * unit});"
    return (
        f"{{ static const int64_t sh[] = {_arr([n for n, _ in merged])};\n"
        f"  be_copy_table_nd({dst}, {src}, {unit}, {len(merged)}, sh, {ctx.pack(key, all_tables)}, {lo}, {hi}, "
        f"{fill_arg}, threads); }}"
    )


def _longest_run(t: np.ndarray) -> tuple[int, int]:
    """[lo, hi) of the longest stretch of non-negative consecutive entries of t (an empty one if none)."""
    best, start = (0, 0), None
    for k in range(len(t) + 1):
        ok = k < len(t) and t[k] >= 0
        if ok and start is not None and t[k] == t[k - 1] + 1:
            continue
        if start is not None and k - start > best[1] - best[0]:
            best = (start, k)
        start = k if ok else None
    return best if best[1] - best[0] >= 2 else (0, 0)


def _bytes(ctx: Ctx, name: str) -> str:
    ctx.require(ctx.dtype(name).kind != "O", f"tensor {name!r} has no fixed-size element type")
    return ctx.tensor(name, "uint8_t")


def _same_shape_copy(ctx: Ctx, src: str, dst: str, shape: list[int], in_strides: list[int], offset: int = 0) -> str:
    """dst (dense over `shape`) from src through `in_strides` (elements) starting at `offset`."""
    return copy_code(
        _bytes(ctx, dst), _bytes(ctx, src), ctx.dtype(src).itemsize, shape, dense_strides(shape), in_strides, 0, offset
    )


@lower("Transpose")
def transpose(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    shape = ctx.shape(x)
    perm = attrs(node).get("perm")
    perm = list(range(len(shape)))[::-1] if perm is None else [int(p) % max(len(shape), 1) for p in perm]
    st = dense_strides(shape)
    return _same_shape_copy(ctx, x, y, [shape[p] for p in perm], [st[p] for p in perm])


@lower("Slice")
def slice_(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    shape = ctx.shape(x)
    if node.op.since < 10:
        a = attrs(node)
        starts, ends, axes, steps = a["starts"], a["ends"], a.get("axes"), None
    else:
        ins = list(node.inputs) + [""] * (5 - len(node.inputs))
        for n in ins[1:5]:
            ctx.require(not n or ctx.const(n) is not None, f"Slice input {n!r} must be a constant")
        starts, ends = ctx.const(ins[1]), ctx.const(ins[2])
        axes, steps = (ctx.const(ins[3]) if ins[3] else None), (ctx.const(ins[4]) if ins[4] else None)
    starts, ends = ints(starts), ints(ends)
    axes = list(range(len(starts))) if axes is None else ints(axes)
    steps = [1] * len(starts) if steps is None else ints(steps)
    st = dense_strides(shape)
    out_shape, in_strides, offset = list(shape), list(st), 0
    for s, e, a, k in zip(starts, ends, axes, steps):
        ctx.require(k != 0, "slice step 0")
        a = a % len(shape)
        lo, hi, k = slice(s, e, k).indices(shape[a])
        out_shape[a] = len(range(lo, hi, k))
        offset += lo * st[a] if out_shape[a] else 0
        in_strides[a] = st[a] * k
    ctx.require(tuple(out_shape) == tuple(ctx.shape(y)), f"slice shape {out_shape} != {ctx.shape(y)}")
    return _same_shape_copy(ctx, x, y, out_shape, in_strides, offset)


@lower("Concat")
def concat(ctx: Ctx, node: Node) -> str:
    y = node.outputs[0]
    shape = list(ctx.shape(y))
    axis = int(attrs(node)["axis"]) % len(shape)
    ost = dense_strides(shape)
    code, at = [], 0
    for x in node.inputs:
        if not x:
            continue
        xs = list(ctx.shape(x))
        code.append(
            copy_code(_bytes(ctx, y), _bytes(ctx, x), ctx.dtype(y).itemsize, xs, ost, dense_strides(xs), at * ost[axis])
        )
        at += xs[axis]
    return "\n".join(code)


@lower("Split")
def split(ctx: Ctx, node: Node) -> str:
    x = node.inputs[0]
    shape = list(ctx.shape(x))
    axis = int(attrs(node).get("axis", 0)) % len(shape)
    st = dense_strides(shape)
    code, at = [], 0
    for y in node.outputs:
        ys = list(ctx.shape(y)) if y else None
        if y:
            code.append(_same_shape_copy(ctx, x, y, ys, st, at * st[axis]))
            at += ys[axis]
    return "\n".join(code)


def _broadcast_strides(shape: tuple[int, ...], out: list[int]) -> list[int]:
    full = [1] * (len(out) - len(shape)) + list(shape)
    st = dense_strides(full)
    return [0 if full[d] == 1 and out[d] != 1 else st[d] for d in range(len(out))]


@lower("Expand")
def expand(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    out = list(ctx.shape(y))
    return _same_shape_copy(ctx, x, y, out, _broadcast_strides(ctx.shape(x), out))


@lower("Tile")
def tile(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    shape, out = list(ctx.shape(x)), list(ctx.shape(y))
    if not shape:
        return _same_shape_copy(ctx, x, y, [1], [1])
    st = dense_strides(shape)
    dims, strides = [], []
    for d, n in enumerate(shape):  # out dim d = (repeat, index): (out[d] // n, n)
        dims += [out[d] // n if n else 0, n]
        strides += [0, st[d]]
    return _same_shape_copy(ctx, x, y, dims, strides)


def _reshape_transpose(ctx: Ctx, node: Node, split: list[int], perm: list[int]) -> str:
    """The input seen as shape `split` (dense), transposed by `perm`, written densely to the output."""
    st = dense_strides(split)
    return _same_shape_copy(ctx, node.inputs[0], node.outputs[0], [split[p] for p in perm], [st[p] for p in perm])


@lower("DepthToSpace")
def depth_to_space(ctx: Ctx, node: Node) -> str:
    b, c, h, w = ctx.shape(node.inputs[0])
    a = attrs(node)
    bs, mode = int(a["blocksize"]), a.get("mode", "DCR")
    ctx.require(mode in ("DCR", "CRD"), f"unknown DepthToSpace mode {mode!r}")
    if mode == "DCR":
        return _reshape_transpose(ctx, node, [b, bs, bs, c // (bs * bs), h, w], [0, 3, 4, 1, 5, 2])
    return _reshape_transpose(ctx, node, [b, c // (bs * bs), bs, bs, h, w], [0, 1, 4, 2, 5, 3])


@lower("SpaceToDepth")
def space_to_depth(ctx: Ctx, node: Node) -> str:
    b, c, h, w = ctx.shape(node.inputs[0])
    bs = int(attrs(node)["blocksize"])
    return _reshape_transpose(ctx, node, [b, c, h // bs, bs, w // bs, bs], [0, 3, 5, 1, 2, 4])


@lower("Pad")
def pad(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    shape, dtype = list(ctx.shape(x)), ctx.dtype(x)
    a = attrs(node)
    mode = a.get("mode", "constant")
    ctx.require(mode in ("constant", "reflect", "edge", "wrap"), f"unknown pad mode {mode!r}")
    ins = list(node.inputs) + [""] * (4 - len(node.inputs))
    value_ptr = None
    if node.op.since < 11:
        pads, value, axes = a["paddings" if node.op.since < 2 else "pads"], a.get("value", 0.0), None
    else:
        ctx.require(ctx.const(ins[1]) is not None, "Pad needs constant pads")
        pads, value = ctx.const(ins[1]), 0
        axes = ctx.const(ins[3]) if ins[3] else None
        if ins[2]:
            if ctx.const(ins[2]) is None:
                ctx.require(ctx.dtype(ins[2]) == dtype, "a runtime constant_value must have the data's type")
                value_ptr = ctx.tensor(ins[2], "uint8_t")
            else:
                value = np.asarray(ctx.const(ins[2])).reshape(-1)[0]
    pads = ints(pads)
    axes = list(range(len(shape))) if axes is None else [int(v) % len(shape) for v in ints(axes)]
    ctx.require(len(pads) == 2 * len(axes), f"{len(pads)} pads for {len(axes)} axes")
    begin, end = [0] * len(shape), [0] * len(shape)
    for i, ax in enumerate(axes):
        begin[ax], end[ax] = pads[i], pads[i + len(axes)]
    st = dense_strides(shape)
    tables = []
    for d, n in enumerate(shape):
        idx = np.arange(n, dtype=np.int64)[max(-begin[d], 0) : n - max(-end[d], 0)]
        width = (max(begin[d], 0), max(end[d], 0))
        if width != (0, 0):
            ctx.require(mode == "constant" or idx.size > 0, f"{mode} padding of an empty axis")
            if mode == "constant":
                idx = np.pad(idx, width, mode="constant", constant_values=-1)
            else:
                idx = np.pad(idx, width, mode=mode)
        tables.append(np.where(idx < 0, -1, idx * st[d]))
    ctx.require([len(t) for t in tables] == list(ctx.shape(y)), "Pad output shape mismatch")
    if value_ptr is None:
        value_ptr = ctx.pack(f"{node.name}/pad_value", np.asarray(value).astype(dtype).reshape(1))
    return table_code(
        ctx, f"{node.name}/pad_tables", _bytes(ctx, y), _bytes(ctx, x), dtype.itemsize, list(ctx.shape(y)), tables,
        f"(const void *){value_ptr}",
    )  # fmt: skip
