"""DeformConv (opsets 19, 22) on be_deform_conv_* (kernels/sampling.h): 1 to 3 spatial dims, float32 and float64,
groups and offset groups, optional bias and mask; weights, offsets, bias and mask may all arrive at run time.
The geometry (output size, begin pads) is the reference's; the step's scratch holds one image's deformed columns
(C * prod(kernel) * prod(out) doubles)."""

from __future__ import annotations

import math

from ....ir import Graph, Node
from ....ops.conv import _geo
from . import Ctx, lower
from .gather import _arr

SUFFIX = {"float32": "f32", "float64": "f64"}


def _geometry(graph: Graph, node: Node):
    x, w = graph.values[node.inputs[0]].shape, graph.values[node.inputs[1]].shape
    a = node.attrs
    return _geo(x, w, a.get("kernel_shape"), a.get("strides"), a.get("dilations"), a.get("pads"), "NOTSET")


def _scratch(graph: Graph, node: Node) -> int:
    kernel, _, _, geo = _geometry(graph, node)
    return graph.values[node.inputs[0]].shape[1] * math.prod(kernel) * math.prod(geo.out) * 8


def _optional(ctx: Ctx, node: Node, i: int) -> str:
    return ctx.tensor(node.inputs[i]) if len(node.inputs) > i and node.inputs[i] else "NULL"


@lower("DeformConv", scratch=_scratch)
def deform_conv(ctx: Ctx, node: Node) -> str:
    x, w, offset, y = *node.inputs[:3], node.outputs[0]
    dt = ctx.dtype(x).name
    ctx.require(dt in SUFFIX, f"no C DeformConv on {dt} (float32 and float64 only)")
    for name in [i for i in node.inputs[1:] if i]:
        ctx.require(ctx.dtype(name).name == dt, f"{name!r} is {ctx.dtype(name)}, expected {dt} (the input's)")
    shape, wshape = ctx.shape(x), ctx.shape(w)
    nsp = len(shape) - 2
    ctx.require(1 <= nsp <= 3, f"the input has rank {len(shape)}, expected 3 to 5 (1 to 3 spatial dims)")
    kernel, strides, dilations, geo = _geometry(ctx.graph, node)
    group, og = int(node.attrs.get("group", 1)), int(node.attrs.get("offset_group", 1))
    n, c, m = shape[0], shape[1], wshape[0]
    ctx.require(c % group == 0 and m % group == 0 and wshape[1] * group == c, f"input {list(shape)} and weight "
                f"{list(wshape)} do not fit group={group}")  # fmt: skip
    ctx.require(og > 0 and c % og == 0, f"{c} channels do not split into offset_group={og}")
    k, length = math.prod(kernel), math.prod(geo.out)
    ctx.require(ctx.size(offset) == n * og * k * nsp * length, f"the offset is {list(ctx.shape(offset))}, "
                f"expected {[n, og * k * nsp, *geo.out]}")  # fmt: skip
    mask = _optional(ctx, node, 4)
    if mask != "NULL":
        ctx.require(ctx.size(node.inputs[4]) == n * og * k * length, f"the mask is {list(ctx.shape(node.inputs[4]))},"
                    f" expected {[n, og * k, *geo.out]}")  # fmt: skip
    if ctx.size(y) == 0:
        return "/* empty */"
    dims = "\n".join(f"  static const long {name}[] = {_arr(v)};" for name, v in [
        ("sp", shape[2:]), ("kern", kernel), ("out", geo.out), ("st", strides), ("dil", dilations),
        ("beg", geo.begin)])  # fmt: skip
    call = (f"be_deform_conv_{SUFFIX[dt]}({ctx.tensor(x)}, {ctx.tensor(w)}, {ctx.tensor(offset)}, "
            f"{_optional(ctx, node, 3)}, {mask}, {ctx.tensor(y)}, {n}, {c}, {m}, {nsp}, sp, kern, out, st, dil, beg, "
            f"{group}, {og}, {ctx.scratch('double')}, threads);")  # fmt: skip
    return "\n".join(["{", dims, f"  {call}", "}"])
