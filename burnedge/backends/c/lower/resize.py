"""Resize and Upsample lowerings: nearest as a table-driven copy, linear / cubic as one float32 pass per axis.

Source coordinates, nearest indices and interpolation taps come from the reference's own helpers
(burnedge/ops/resize.py), evaluated here at compile time, so the C code only walks constant tables:

- nearest (any dtype): one table per dim of source offsets (-1 where tf_crop_and_resize extrapolates), then
  `be_copy_table_nd` (kernels/copy.c);
- linear / cubic / antialias (float32): for each resized axis in the reference's order, a table of k source
  indices and k weights per output index, then `be_resize_axis_f32` (kernels/resize.c); intermediate results
  ping-pong between two halves of the step's scratch memory;
- tf_crop_and_resize with a roi that arrives at run time: resize_roi.py.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ....ir import Graph, Node
from ....ops import resize as ref
from . import Ctx, lower
from .movement import attrs, dense_strides, table_code
from .resize_roi import crop_and_resize


class _Params:
    """Everything the reference derives from a Resize / Upsample node, computed from the graph alone."""

    def __init__(self, graph: Graph, node: Node):
        a = attrs(node)
        x = graph.values[node.inputs[0]]
        self.shape = tuple(x.shape)
        self.dtype = x.dtype
        self.error = ""

        def const(i: int):
            name = node.inputs[i] if len(node.inputs) > i else ""
            if not name:
                return None
            v = graph.values[name]
            if v.data is None:
                self.error = f"input {name!r} must be a constant"
            return v.data

        roi, sizes, axes, policy = None, None, None, "stretch"
        self.cubic_a, self.exclude, self.extrap, self.antialias = -0.75, 0, 0.0, 0
        self.runtime_roi, self.axes_attr = "", None
        if node.op_type == "Upsample" or node.op.since < 11:
            if node.op_type == "Upsample" and node.op.since < 7:
                scales = [1.0, 1.0, a["height_scale"], a["width_scale"]]
                mode = {"NN": "nearest", "BILINEAR": "linear"}.get(a.get("mode", "NN"), a.get("mode", "NN"))
            else:
                scales = a["scales"] if node.op_type == "Upsample" and node.op.since < 9 else const(1)
                mode = a.get("mode", "nearest")
            mode = {"bilinear": "linear"}.get(mode, mode)
            scales = np.asarray(scales, dtype=np.float32)
            self.coord = "asymmetric"
            self.nearest_mode = "floor" if bool(np.all(scales >= 1)) else "ceil"
        else:
            scales, sizes = const(2), const(3)
            mode = a.get("mode", "nearest")
            self.coord = a.get("coordinate_transformation_mode", "half_pixel")
            runtime_roi = len(node.inputs) > 1 and node.inputs[1] and graph.values[node.inputs[1]].data is None
            if runtime_roi and self.coord == "tf_crop_and_resize":  # a runtime roi matters to it only
                self.runtime_roi = node.inputs[1]  # resize_roi.py reads it in the step
            elif not runtime_roi:
                roi = const(1)
            self.nearest_mode = a.get("nearest_mode", "round_prefer_floor")
            self.cubic_a = a.get("cubic_coeff_a", -0.75)
            self.exclude = a.get("exclude_outside", 0)
            self.extrap = a.get("extrapolation_value", 0.0)
            self.antialias = a.get("antialias", 0)
            axes, policy = a.get("axes"), a.get("keep_aspect_ratio_policy", "stretch")
            self.axes_attr = axes
        self.mode = mode
        self.axes, self.scales, self.out_shape, self.roi = ref._plan(self.shape, roi, scales, sizes, axes, policy)

    def resized(self) -> list[int]:
        """The axes the reference actually resamples, in its order."""
        keep = []
        for d in self.axes:
            n_in, n_out, scale = self.shape[d], self.out_shape[d], self.scales[d]
            if math.isclose(scale, 1.0) and n_out == n_in and np.allclose(self.roi[d], (0.0, 1.0)):
                continue
            keep.append(d)
        return keep

    def coords(self, d: int, n_in: int) -> tuple[np.ndarray, np.ndarray | None]:
        return ref._source_coords(self.coord, self.out_shape[d], n_in, self.scales[d], self.roi[d])


def _check(ctx: Ctx, p: _Params) -> None:
    ctx.require(not p.error, p.error)
    ctx.require(p.mode in ("nearest", "linear", "cubic"), f"unknown mode {p.mode!r}")
    ctx.require(p.coord in ref._COORD_MODES, f"unknown coordinate_transformation_mode {p.coord!r}")
    ctx.require(p.mode == "nearest" or p.dtype == np.float32, f"{p.mode} Resize of {p.dtype} (float32 only)")
    ctx.require(all(n > 0 for n in p.shape), "Resize of an empty tensor")


def _passes(p: _Params) -> list[tuple[int, tuple[int, ...], tuple[int, ...]]]:
    """(axis, shape before, shape after) of each float pass of a linear / cubic resize, cheapest order first.

    Interpolation is separable, so any axis order gives the reference's result up to rounding; a pass costs its
    output size times its taps, and a pass over the last axis (one element per tap) costs about 8 times more
    since it cannot be vectorised. Ties keep the reference's order.
    """
    best: tuple[float, list] = (math.inf, [])
    for order in itertools.permutations(p.resized()):
        out, cur, cost = [], list(p.shape), 0.0
        for d in order:
            before = tuple(cur)
            cur[d] = p.out_shape[d]
            out.append((d, before, tuple(cur)))
            cost += math.prod(cur) * (8 if d == len(cur) - 1 else 1)
        if cost < best[0]:
            best = (cost, out)
    return best[1]


def _scratch_halves(p: _Params) -> tuple[int, int]:
    """Bytes of the two ping-pong buffers (64-byte multiples) holding the intermediate results."""
    sizes = [math.prod(after) * 4 for _, _, after in _passes(p)[:-1]]
    half = [max(sizes[0::2], default=0), max(sizes[1::2], default=0)]
    return tuple((h + 63) // 64 * 64 for h in half)


def _scratch(graph: Graph, node: Node) -> int:
    try:
        p = _Params(graph, node)
    except (ValueError, KeyError, TypeError):
        return 0
    if p.mode == "nearest" or p.error:
        return 0
    return sum(_scratch_halves(p))


@lower("Resize", "Upsample", scratch=_scratch)
def resize(ctx: Ctx, node: Node) -> str:
    y = node.outputs[0]
    try:
        p = _Params(ctx.graph, node)
    except (ValueError, KeyError, TypeError) as exc:
        ctx.require(False, str(exc))
    _check(ctx, p)
    ctx.require(tuple(p.out_shape) == tuple(ctx.shape(y)), f"Resize shape {p.out_shape} != {ctx.shape(y)}")
    if math.prod(p.out_shape) == 0:
        return "/* empty */"
    if p.runtime_roi:
        return crop_and_resize(ctx, node, p)
    return _nearest(ctx, node, p) if p.mode == "nearest" else _interpolate(ctx, node, p)


def _nearest(ctx: Ctx, node: Node, p: _Params) -> str:
    st = dense_strides(p.shape)
    resized = set(p.resized())
    tables = []
    for d, n_in in enumerate(p.shape):
        if d not in resized:
            tables.append(np.arange(n_in, dtype=np.int64) * st[d])
            continue
        xo, extrap = p.coords(d, n_in)
        idx = np.clip(ref._nearest_index(xo, p.nearest_mode), 0, n_in - 1).astype(np.int64) * st[d]
        if extrap is not None:
            idx = np.where(extrap, -1, idx)
        tables.append(idx)
    fill = ctx.pack(f"{node.name}/extrapolation", np.asarray(p.extrap).astype(p.dtype).reshape(1))
    x, y = node.inputs[0], node.outputs[0]
    return table_code(
        ctx, f"{node.name}/tables", ctx.tensor(y, "uint8_t"), ctx.tensor(x, "uint8_t"), p.dtype.itemsize,
        list(p.out_shape), tables, f"(const void *){fill}",
    )  # fmt: skip


def _interpolate(ctx: Ctx, node: Node, p: _Params) -> str:
    x, y = node.inputs[0], node.outputs[0]
    passes = _passes(p)
    if not passes:
        return f"memcpy({ctx.tensor(y)}, {ctx.tensor(x)}, {math.prod(p.shape) * 4});"
    half0, _ = _scratch_halves(p)
    bufs = [ctx.scratch("float"), f"({ctx.scratch('float')} + {half0 // 4})"] if len(passes) > 1 else []
    code, src = [], ctx.tensor(x)
    for i, (d, before, after) in enumerate(passes):
        n_in, n_out = before[d], after[d]
        xo, extrap = p.coords(d, n_in)
        idx, w = ref._taps(xo, n_in, p.mode, p.scales[d], p.antialias, p.cubic_a, p.exclude)
        idx = idx.astype(np.int32)
        if extrap is not None:
            idx[extrap, 0] = -1
        k = idx.shape[1]
        dst = ctx.tensor(y) if i == len(passes) - 1 else bufs[i % 2]
        code.append(
            f"be_resize_axis_f32({dst}, {src}, {math.prod(before[:d])}, {n_in}, {n_out}, {math.prod(before[d + 1 :])}, "
            f"{k}, {ctx.pack(f'{node.name}/idx{i}', idx)}, {ctx.pack(f'{node.name}/w{i}', w.astype(np.float32))}, "
            f"{_float(p.extrap)}, threads);"
        )
        src = dst
    return "\n".join(code)


def _float(v: float) -> str:
    v = float(np.float32(v))
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return repr(v) + "f"
