"""Pooling lowerings: MaxPool and AveragePool (1D, 2D and 3D), GlobalAveragePool and GlobalMaxPool.

Window geometry comes from the same `geometry()` the numpy reference uses (explicit pads, auto_pad, ceil_mode,
dilations), so output sizes and pads agree by construction. A pool whose one window covers the whole input (the
classifier heads of ds_cnn, mobilenet_v1 and resnet8) runs as a global pool.
MaxUnpool scatters X to the flat positions I (run-time indices, negative ones counting from the end as numpy's
indexing does; one out of range fails the step) of the zero unpooled tensor, whose shape is the reference's; an
output_shape (constant) places that tensor at the origin of a zero tensor of its shape, dropping what lies past it.
"""

from __future__ import annotations

import math

from ....ir import Node
from ....ops.pool import _unpool_shape
from . import Ctx, ctype, lower
from .layout import covers_input, nhwc_int8_tensors, nhwc_tensors, pool_geometry
from .reduce import attr, kernel


def _global(ctx: Ctx, node: Node, is_max: bool) -> str:
    x, y = node.inputs[0], node.outputs[0]
    shape = ctx.shape(x)
    ctx.require(len(shape) >= 2, "a global pool needs an input of rank >= 2")
    dt = ctx.dtype(x).name
    suffix = {"float32": "f32", "int8": "i8", "uint8": "u8"}.get(dt)
    ctx.require(suffix == "f32" or (is_max and suffix is not None), f"no C global pool on {dt}")
    nc, size = shape[0] * shape[1], ctx.size(x) // max(shape[0] * shape[1], 1)
    if nc and x in nhwc_tensors(ctx.graph):  # (N, H, W, C) in the arena
        fn = f"be_global_{'max' if is_max else 'avg'}pool_nhwc_f32"
        return f"{fn}({ctx.tensor(x)}, {ctx.tensor(y)}, {shape[0]}, {size}, {shape[1]}, threads);"
    fn = (
        kernel(f"be_global_{'max' if is_max else 'avg'}pool_{suffix}")
        if suffix == "f32"
        else f"be_global_maxpool_{suffix}"
    )
    if nc == 0:
        return "/* empty */"
    return f"{fn}({ctx.tensor(x)}, {ctx.tensor(y)}, {nc}, {size}, threads);"


@lower("GlobalAveragePool")
def global_average_pool(ctx: Ctx, node: Node) -> str:
    return _global(ctx, node, False)


@lower("GlobalMaxPool")
def global_max_pool(ctx: Ctx, node: Node) -> str:
    return _global(ctx, node, True)


def pool_window(ctx: Ctx, node: Node) -> list[int] | str | None:
    """The 2-D window of a 1-D/2-D pool node (a 1-D pool is a 2-D pool of height 1), as the kernels take it:
    [N*C, H, W, OH, OW, KH, KW, SH, SW, DH, DW, pad top, pad left, lo_h, hi_h, lo_w, hi_w] where [lo, hi) is the
    input range an average counts; "global" when one window covers the whole input; None when there is no output.
    A 3-D pool gives [N*C, then be_pool3d_f32's 8 triples] (25 numbers) instead.
    """
    x, y = node.inputs[0], node.outputs[0]
    shape = ctx.shape(x)
    ctx.require(len(shape) in (3, 4, 5), f"only 1D, 2D and 3D pools, not rank {len(shape)}")
    n_sp = len(shape) - 2
    kern, strides, dil, geo = pool_geometry(tuple(shape), node)
    spatial = list(shape[2:])
    nc = shape[0] * shape[1]
    if nc == 0 or ctx.size(y) == 0:
        return None
    if covers_input(tuple(shape), node):
        return "global"
    count_pad = bool(attr(node, "count_include_pad", 0))
    lo = [-b for b in geo.begin] if count_pad else [0] * n_sp
    hi = [s + e for s, e in zip(spatial, geo.end_explicit)] if count_pad else spatial
    out, begin = geo.out, geo.begin
    if n_sp == 3:  # be_pool3d_f32's triples
        return [nc, *spatial, *out, *kern, *strides, *dil, *begin, *lo, *hi]
    if n_sp == 1:  # one row: the height axis is a single tap
        spatial, kern, strides, dil = [1, *spatial], [1, *kern], [1, *strides], [1, *dil]
        out, begin, lo, hi = [1, *out], [0, *begin], [0, *lo], [1, *hi]
    return [nc, *spatial, *out, *kern, *strides, *dil, *begin, lo[0], hi[0], lo[1], hi[1]]


@lower("MaxPool", "AveragePool")
def pool(ctx: Ctx, node: Node) -> str:
    is_max = node.op_type == "MaxPool"
    x, y = node.inputs[0], node.outputs[0]
    dt = ctx.dtype(x).name
    if is_max and len(node.outputs) > 1 and node.outputs[1]:
        return _max_pool_indices(ctx, node)
    ctx.require(dt == "float32" or (is_max and dt in ("int8", "uint8")), f"no C {node.op_type} on {dt}")
    window = pool_window(ctx, node)
    if window is None:
        return "/* empty */"
    if window == "global":
        return _global(ctx, node, is_max)
    if len(window) == 25:  # 3-D
        ctx.require(dt == "float32", f"no C 3-D {node.op_type} on {dt} (float32 only)")
        geo = ", ".join(map(str, window[1:]))
        body = f"be_pool3d_f32({ctx.tensor(x)}, {ctx.tensor(y)}, {window[0]}, g, {int(is_max)}, threads);"
        return f"{{ static const int g[] = {{{geo}}};\n  {body} }}"
    geo_args, count = ", ".join(map(str, window[:13])), ", ".join(map(str, window[13:]))
    if is_max and (x in nhwc_tensors(ctx.graph) or x in nhwc_int8_tensors(ctx.graph)):  # (N, H, W, C) both sides
        n, c = ctx.shape(x)[:2]
        fn = f"be_maxpool2d_nhwc_{'f32' if dt == 'float32' else 'i8'}"
        return f"{fn}({ctx.tensor(x)}, {ctx.tensor(y)}, {n}, {c}, {', '.join(map(str, window[1:13]))}, threads);"
    if is_max:
        suffix = {"float32": "f32", "int8": "i8", "uint8": "u8"}[dt]
        fn = kernel("be_maxpool2d_f32") if suffix == "f32" else f"be_maxpool2d_{suffix}"
        return f"{fn}({ctx.tensor(x)}, {ctx.tensor(y)}, {geo_args}, threads);"
    return f"{kernel('be_avgpool2d_f32')}({ctx.tensor(x)}, {ctx.tensor(y)}, {geo_args}, {count}, threads);"


def _max_pool_indices(ctx: Ctx, node: Node) -> str:
    """MaxPool with its Indices output (1-D and 2-D, float32): a direct loop over each window's taps in order, the
    first strict maximum winning and padding counting as -inf, as the reference; the index is the winner's flat
    position in the input, its spatial axes row-major (storage_order 0) or column-major (1)."""
    x, y, ind = node.inputs[0], node.outputs[0], node.outputs[1]
    ctx.require(ctx.dtype(x).name == "float32", f"no C MaxPool with Indices on {ctx.dtype(x)} (float32 only)")
    w = pool_window(ctx, node)
    ctx.require(w != "global" and (w is None or len(w) == 17), "MaxPool's Indices: 1-D and 2-D windows only")
    if w is None:
        return "/* empty */"
    nc, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw = w[:13]
    flat = "iy * IW + ix" if not int(attr(node, "storage_order", 0)) else "ix * IH + iy"
    return "\n".join([
        "{",
        f"  const float *xp = {ctx.tensor(x)};",
        f"  float *yp = {ctx.tensor(y)};",
        f"  int64_t *ip = {ctx.tensor(ind)};",
        f"  const long IH = {ih}, IW = {iw};",
        f"  for (long p = 0; p < {nc}; p++)",
        f"    for (long oy = 0; oy < {oh}; oy++)",
        f"      for (long ox = 0; ox < {ow}; ox++) {{",
        "        float best = 0.0f;",
        "        int64_t at = 0;",
        f"        for (long ky = 0; ky < {kh}; ky++)",
        f"          for (long kx = 0; kx < {kw}; kx++) {{",
        f"            const long iy = oy * {sh} + ky * {dh} - {ph}, ix = ox * {sw} + kx * {dw} - {pw};",
        "            const int in = iy >= 0 && iy < IH && ix >= 0 && ix < IW;",
        "            const float v = in ? xp[p * IH * IW + iy * IW + ix] : -INFINITY;",
        f"            if ((ky == 0 && kx == 0) || v > best) {{ best = v; at = p * IH * IW + {flat}; }}",
        "          }",
        f"        yp[(p * {oh} + oy) * {ow} + ox] = best;",
        f"        ip[(p * {oh} + oy) * {ow} + ox] = at;",
        "      }",
        "}",
    ])  # fmt: skip


@lower("MaxUnpool")
def max_unpool(ctx: Ctx, node: Node) -> str:
    x, ind, y = node.inputs[0], node.inputs[1], node.outputs[0]
    xs, out = ctx.shape(x), ctx.shape(y)
    ctx.require(ctx.shape(ind) == xs, f"the indices have shape {list(ctx.shape(ind))}, expected {list(xs)} (X's)")
    ctx.require(ctx.dtype(ind).kind in "iu", f"the indices have dtype {ctx.dtype(ind)}, expected an integer")
    a = node.attrs
    full = [*xs[:2], *_unpool_shape(xs, a.get("kernel_shape"), a.get("pads"), a.get("strides"))]
    ctx.require(
        len(out) == len(full) and list(out[:2]) == full[:2], f"the output {list(out)} does not fit X {list(xs)}"
    )
    if ctx.size(y) == 0:
        return "/* empty */"
    ct, total = ctype(ctx.dtype(x)), math.prod(full)
    # position in Y of unpooled flat index k: its coordinates over `full`, each within `out`
    coords = [f"c{d} = (k / {math.prod(full[d + 1 :])}) % {full[d]}" for d in range(len(full))]
    offset = " + ".join(f"c{d} * {math.prod(out[d + 1 :])}" for d in range(len(full)))
    inside = " && ".join(f"c{d} < {out[d]}" for d in range(len(full)))
    return "\n".join([
        "{",
        f"  const {ct} *xp = {ctx.tensor(x)};",
        f"  const {ctype(ctx.dtype(ind))} *ip = {ctx.tensor(ind)};",
        f"  {ct} *yp = {ctx.tensor(y)};",
        f"  memset(yp, 0, {ctx.size(y) * ctx.dtype(y).itemsize});",
        f"  for (long i = 0; i < {ctx.size(x)}; i++) {{",
        "    long k = (long)ip[i];",
        f"    if (k < 0) k += {total};",
        f"    if (k < 0 || k >= {total}) return 2;",
        f"    const long {', '.join(coords)};",
        f"    if ({inside}) yp[{offset}] = xp[i];",
        "  }",
        "}",
    ])  # fmt: skip
