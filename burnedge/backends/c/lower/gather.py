"""Indexing lowerings (Gather, GatherElements, GatherND, ScatterND): byte-level kernels in kernels/gather.c.

Indices may be constants or runtime int32 / int64 tensors; negative ones count from the end of their axis. A
Gather whose constant indices form an arithmetic progression (a single index, a range, a stride) is a strided
copy instead (`copy_code`), so `x[:, 0]` costs no more than a slice.
"""

from __future__ import annotations

import math

import numpy as np

from ....ir import Node
from . import Ctx, lower
from .movement import attrs, copy_code, dense_strides

REDUCTIONS = {"none": "BE_SCATTER_NONE", "add": "BE_SCATTER_ADD", "mul": "BE_SCATTER_MUL", "max": "BE_SCATTER_MAX",
              "min": "BE_SCATTER_MIN"}  # fmt: skip


def _index_arg(ctx: Ctx, name: str) -> tuple[str, int]:
    """(pointer, 1 if int64) of an index tensor."""
    dt = ctx.dtype(name)
    ctx.require(dt in (np.int32, np.int64), f"indices of type {dt} (int32 or int64 only)")
    return ctx.tensor(name, "void"), int(dt == np.int64)


def _bytes(ctx: Ctx, name: str) -> str:
    ctx.require(ctx.dtype(name).kind != "O", f"tensor {name!r} has no fixed-size element type")
    return ctx.tensor(name, "uint8_t")


def _prod(xs) -> int:
    return int(math.prod(int(x) for x in xs))


@lower("Gather")
def gather(ctx: Ctx, node: Node) -> str:
    data, ind, y = node.inputs[0], node.inputs[1], node.outputs[0]
    shape = list(ctx.shape(data))
    axis = int(attrs(node).get("axis", 0)) % len(shape)
    outer, n_axis, inner = _prod(shape[:axis]), shape[axis], _prod(shape[axis + 1 :])
    item = ctx.dtype(data).itemsize
    if _prod(ctx.shape(y)) == 0:
        return "/* empty */"
    const = ctx.const(ind)
    if const is not None:
        idx = np.asarray(const, np.int64).reshape(-1)
        idx = np.where(idx < 0, idx + n_axis, idx)
        ctx.require(bool(((idx >= 0) & (idx < n_axis)).all()), "constant Gather index out of range")
        step = int(idx[1] - idx[0]) if idx.size > 1 else 1
        if np.array_equal(idx, idx[0] + step * np.arange(idx.size)):
            m = idx.size
            return copy_code(
                _bytes(ctx, y), _bytes(ctx, data), item, [outer, m, inner], dense_strides([outer, m, inner]),
                [n_axis * inner, step * inner, 1], 0, int(idx[0]) * inner,
            )  # fmt: skip
    ptr, is64 = _index_arg(ctx, ind)
    return (
        f"be_gather({_bytes(ctx, y)}, {_bytes(ctx, data)}, {ptr}, {is64}, {outer}, {n_axis}, "
        f"{_prod(ctx.shape(ind))}, {inner * item}, threads);"
    )


def _arr(values) -> str:
    return "{" + ", ".join(str(int(v)) for v in values) + "}"


@lower("GatherElements")
def gather_elements(ctx: Ctx, node: Node) -> str:
    data, ind, y = node.inputs[0], node.inputs[1], node.outputs[0]
    shape, ishape = list(ctx.shape(data)), list(ctx.shape(ind))
    axis = int(attrs(node).get("axis", 0)) % len(shape)
    if _prod(ishape) == 0:
        return "/* empty */"
    ptr, is64 = _index_arg(ctx, ind)
    return (
        f"{{ static const int64_t sh[] = {_arr(ishape)}, ds[] = {_arr(dense_strides(shape))};\n"
        f"  be_gather_elements({_bytes(ctx, y)}, {_bytes(ctx, data)}, {ptr}, {is64}, {ctx.dtype(data).itemsize}, "
        f"{len(ishape)}, sh, ds, {axis}, {shape[axis]}, threads); }}"
    )


@lower("GatherND")
def gather_nd(ctx: Ctx, node: Node) -> str:
    data, ind, y = node.inputs[0], node.inputs[1], node.outputs[0]
    shape, ishape = list(ctx.shape(data)), list(ctx.shape(ind))
    b = int(attrs(node).get("batch_dims", 0))
    k = ishape[-1]
    item = ctx.dtype(data).itemsize
    if _prod(ctx.shape(y)) == 0:
        return "/* empty */"
    ptr, is64 = _index_arg(ctx, ind)
    st = dense_strides(shape)
    ctx.require(k >= 1, "GatherND with empty index tuples")
    dims, strides = shape[b : b + k], [st[b + m] * item for m in range(k)]
    return (
        f"{{ static const int64_t dims[] = {_arr(dims)}, st[] = {_arr(strides)};\n"
        f"  be_gather_nd({_bytes(ctx, y)}, {_bytes(ctx, data)}, {ptr}, {is64}, {_prod(shape[:b])}, "
        f"{_prod(ishape[b:-1])}, {k}, dims, st, {_prod(shape[b:]) * item}, {_prod(shape[b + k :]) * item}, "
        f"threads); }}"
    )


@lower("ScatterND")
def scatter_nd(ctx: Ctx, node: Node) -> str:
    data, ind, upd, y = node.inputs[0], node.inputs[1], node.inputs[2], node.outputs[0]
    shape, ishape = list(ctx.shape(data)), list(ctx.shape(ind))
    reduction = attrs(node).get("reduction", "none")
    ctx.require(reduction in REDUCTIONS, f"unknown reduction {reduction!r}")
    ctx.require(reduction == "none" or ctx.dtype(data) == np.float32, f"ScatterND {reduction} on float32 only")
    k = ishape[-1]
    ctx.require(k >= 1, "ScatterND with empty index tuples")
    item = ctx.dtype(data).itemsize
    nbytes = _prod(shape) * item
    code = [f"memcpy({_bytes(ctx, y)}, {_bytes(ctx, data)}, {nbytes});" if nbytes else "/* empty */"]
    n = _prod(ishape[:-1])
    if n and nbytes:
        ptr, is64 = _index_arg(ctx, ind)
        st = dense_strides(shape)
        code.append(
            f"{{ static const int64_t dims[] = {_arr(shape[:k])}, st[] = {_arr([st[m] * item for m in range(k)])};\n"
            f"  be_scatter_nd({_bytes(ctx, y)}, {_bytes(ctx, upd)}, {ptr}, {is64}, {n}, {k}, dims, st, "
            f"{_prod(shape[k:]) * item}, {REDUCTIONS[reduction]}); }}"
        )
    return "\n".join(code)
