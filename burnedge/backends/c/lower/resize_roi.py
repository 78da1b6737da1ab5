"""Resize with coordinate_transformation_mode tf_crop_and_resize and a roi that arrives at run time (linear,
float32): the step computes each resized axis's source positions from the roi as the reference does
(ops/resize.py: _source_coords, _taps), x = start * (n_in - 1) + y * (end - start) * (n_in - 1) / (width - 1), and
its two taps (the left neighbour preferred on the grid, indices clamped); an output element with any axis outside
[0, n_in - 1] is the extrapolation value, the others the product-weighted sum of their 2^k taps, in double."""

from __future__ import annotations

import math

import numpy as np

from ....ir import Node
from . import Ctx, ctype
from .elementwise import _literal
from .movement import dense_strides


def crop_and_resize(ctx: Ctx, node: Node, p) -> str:
    """The C of Resize `node` (its parameters `p`, resize._Params) with a run-time roi."""
    ctx.require(p.mode == "linear", f"a run-time roi with {p.mode} mode (linear only)")
    ctx.require(p.dtype == np.float32, f"a run-time roi on {p.dtype} (float32 only)")
    x, roi, y = node.inputs[0], p.runtime_roi, node.outputs[0]
    shape, out = list(p.shape), list(p.out_shape)
    r = len(shape)
    axes = list(range(r)) if p.axes_attr is None else [int(a) % r for a in p.axes_attr]
    ctx.require(ctx.size(roi) == 2 * len(axes), f"roi has {ctx.size(roi)} values, expected {2 * len(axes)}")
    st_in, st_out = dense_strides(shape), dense_strides(out)
    lines = ["{", f"  const float *xp = {ctx.tensor(x)};", f"  float *yp = {ctx.tensor(y)};",
             f"  const {ctype(ctx.dtype(roi))} *roi = {ctx.tensor(roi)};"]  # fmt: skip
    for i, d in enumerate(axes):  # per resized axis: taps i0, i1, weight of i1, extrapolated?
        n_in, n_out = shape[d], out[d]
        width = p.scales[d] * n_in
        pos = f"(e - s) * {n_in - 1} / 2.0" if math.isclose(width, 1.0) else f"o * (e - s) * {n_in - 1} / {width - 1!r}"
        lines += [
            f"  long a{d}0[{n_out}], a{d}1[{n_out}]; double w{d}[{n_out}]; int e{d}[{n_out}];",
            f"  {{ const double s = roi[{i}], e = roi[{i + len(axes)}];",
            f"    for (long o = 0; o < {n_out}; o++) {{",
            f"      double v = {pos};",
            f"      v += s * {n_in - 1};",
            f"      e{d}[o] = v < 0 || v > {n_in - 1};",
            "      double b = floor(v), ratio = v - b;",
            "      if (v == b) { b -= 1; ratio = 1.0; }",
            f"      const long b0 = (long)b < 0 ? 0 : ((long)b > {n_in - 1} ? {n_in - 1} : (long)b);",
            f"      const long b1 = (long)b + 1 < 0 ? 0 : ((long)b + 1 > {n_in - 1} ? {n_in - 1} : (long)b + 1);",
            f"      a{d}0[o] = b0 * {st_in[d]}; a{d}1[o] = b1 * {st_in[d]}; w{d}[o] = ratio;",
            "    } }",
        ]
    coords = [f"const long c{d} = (i / {st_out[d]}) % {out[d]};" for d in range(r)]
    base = " + ".join(f"c{d} * {st_in[d]}" for d in range(r) if d not in axes) or "0"
    ext = " || ".join(f"e{d}[c{d}]" for d in axes)
    terms = []
    for bits in range(1 << len(axes)):
        w = " * ".join(f"w{d}[c{d}]" if bits >> k & 1 else f"(1.0 - w{d}[c{d}])" for k, d in enumerate(axes))
        off = " + ".join(f"a{d}{bits >> k & 1}[c{d}]" for k, d in enumerate(axes))
        terms.append(f"{w} * xp[base + {off}]")
    lines += [
        f"  for (long i = 0; i < {math.prod(out)}; i++) {{",
        *("    " + c for c in coords),
        f"    const long base = {base};",
        f"    yp[i] = ({ext}) ? {_literal(p.extrap, np.dtype(np.float32))} : (float)({' + '.join(terms)});",
        "  }",
        "}",
    ]
    return "\n".join(lines)
