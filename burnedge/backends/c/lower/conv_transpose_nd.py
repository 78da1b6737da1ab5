"""ConvTranspose beyond the 2-D kernel (conv.py): 3-D, float64, and output offsets that crop before the first
input (negative pads), as a direct scatter in double. The geometry is the reference's (`_ct_geometry`); every
input element times every kernel tap adds to the output element o = i * stride + k * dilation - begin, when
that lies inside the output. Scratch: one double accumulator per output element; weights may arrive at run time."""

from __future__ import annotations

import math

import numpy as np

from ....ir import Graph, Node
from ....ops.conv_transpose import _ct_geometry
from . import Ctx, ctype


def nd_geometry(graph: Graph, node: Node):
    """(kernel, strides, dilations, begin, out) per spatial axis, as the reference computes them."""
    x, w = graph.values[node.inputs[0]].shape, graph.values[node.inputs[1]].shape
    a = node.attrs
    kernel, strides, dil, _full, begin, out = _ct_geometry(
        x, w, a.get("auto_pad", "NOTSET"), a.get("dilations"), int(a.get("group", 1)), a.get("kernel_shape"),
        a.get("output_padding"), a.get("output_shape"), a.get("pads"), a.get("strides"),
    )  # fmt: skip
    return kernel, strides, dil, begin, out


def convt_nd_scratch(graph: Graph, node: Node) -> int:
    return int(np.prod(graph.values[node.outputs[0]].shape, dtype=np.int64)) * 8


def conv_transpose_nd(ctx: Ctx, node: Node) -> str:
    x, w, y = node.inputs[0], node.inputs[1], node.outputs[0]
    dt = ctx.dtype(x)
    ctx.require(dt in (np.float32, np.float64), f"no C ConvTranspose on {dt} (float32 and float64 only)")
    for name in [i for i in node.inputs[1:3] if i]:
        ctx.require(ctx.dtype(name) == dt, f"{name!r} is {ctx.dtype(name)}, expected {dt} (the input's)")
    xs, ws = ctx.shape(x), ctx.shape(w)
    nsp = len(xs) - 2
    ctx.require(1 <= nsp <= 3, f"the input has rank {len(xs)}, expected 3 to 5 (1 to 3 spatial dims)")
    kernel, strides, dil, begin, out = nd_geometry(ctx.graph, node)
    pad = [1] * (3 - nsp)
    ins, kernel, out = pad + list(xs[2:]), pad + list(kernel), pad + list(out)
    strides, dil, begin = pad + list(strides), pad + list(dil), [0] * (3 - nsp) + list(begin)
    group = int(node.attrs.get("group", 1))
    n, c, mg = xs[0], xs[1], ws[1]
    m, cg, plane, ntaps, isz = mg * group, c // group, math.prod(out), math.prod(kernel), math.prod(ins)
    ctx.require(list(ctx.shape(y)) == [n, m, *out[3 - nsp :]], f"the output is {list(ctx.shape(y))}")
    if ctx.size(y) == 0:
        return "/* empty */"
    ct, bias = ctype(dt), node.inputs[2] if len(node.inputs) > 2 and node.inputs[2] else ""
    loops = " ".join(f"for (long {v} = 0; {v} < {ins[a]}; {v}++)" for a, v in enumerate("ijk"))
    taps = " ".join(f"for (long {v} = 0; {v} < {kernel[a]}; {v}++) {{ const long o{a} = {'ijk'[a]} * {strides[a]} + "
                    f"{v} * {dil[a]} - {begin[a]}; if (o{a} < 0 || o{a} >= {out[a]}) continue;"
                    for a, v in enumerate("pqr"))  # fmt: skip
    add_bias = f" + (double){ctx.tensor(bias)}[(e / {plane}) % {m}]" if bias else ""
    return "\n".join([
        "{",
        f"  const {ct} *xp = {ctx.tensor(x)}, *wp = {ctx.tensor(w)};",
        f"  {ct} *yp = {ctx.tensor(y)};",
        f"  double *acc = {ctx.scratch('double')};",
        f"  memset(acc, 0, {ctx.size(y) * 8});",
        f"  for (long b = 0; b < {n}; b++)",
        f"    for (long ic = 0; ic < {c}; ic++)",
        f"      for (long ol = 0; ol < {mg}; ol++) {{",
        f"        const {ct} *wk = wp + (ic * {mg} + ol) * {ntaps}, *xi = xp + (b * {c} + ic) * {isz};",
        f"        double *ya = acc + (b * {m} + ic / {cg} * {mg} + ol) * {plane};",
        f"        {loops} {{",
        f"          const double xv = xi[(i * {ins[1]} + j) * {ins[2]} + k];",
        f"          {taps}",
        f"            ya[(o0 * {out[1]} + o1) * {out[2]} + o2] += xv * wk[(p * {kernel[1]} + q) * {kernel[2]} + r];",
        "          }}}",
        "        }",
        "      }",
        f"  for (long e = 0; e < {ctx.size(y)}; e++)",
        f"    yp[e] = ({ct})(acc[e]{add_bias});",
        "}",
    ])  # fmt: skip
