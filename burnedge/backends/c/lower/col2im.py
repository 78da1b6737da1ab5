"""Col2Im (opset 18): the columns (N, C*prod(block), L) summed back into images (N, C, *image_shape).

image_shape and block_shape must be constants (bound when they are graph inputs: they decide the output's shape).
The window geometry is the reference's (`ops._im2col.geometry`); from it a table made here gives, for every
(block position, window) pair, the image element it adds to, or -1 where the pads crop it away. The step zeroes the
output and adds each column element through the table, one image channel at a time.
"""

from __future__ import annotations

import numpy as np

from ....ir import Node
from ....ops._im2col import attr_list, geometry
from . import Ctx, lower
from .movement import ints


@lower("Col2Im")
def col2im(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    ctx.require(ctx.dtype(x) == np.float32, f"no C Col2Im on {ctx.dtype(x)} (float32 only)")
    image, block = ctx.const(node.inputs[1]), ctx.const(node.inputs[2])
    ctx.require(image is not None and block is not None, "image_shape and block_shape must be constants (bind them)")
    image, block = ints(image), ints(block)
    n_sp = len(image)
    strides = attr_list(node.attrs.get("strides"), n_sp, 1, "strides")
    dil = attr_list(node.attrs.get("dilations"), n_sp, 1, "dilations")
    geo = geometry(image, block, strides, dil, node.attrs.get("pads"))
    n, ck, length = ctx.shape(x)
    k = int(np.prod(block))
    ctx.require(ck % k == 0 and length == int(np.prod(geo.out)), f"input {[n, ck, length]} does not fit the blocks")
    if ctx.size(y) == 0:
        return "/* empty */"
    # image position of every (block offset b, window o) pair: o * stride + b * dilation - begin pad
    b_idx = np.stack(np.meshgrid(*[np.arange(v) for v in block], indexing="ij"), -1).reshape(-1, 1, n_sp)
    o_idx = np.stack(np.meshgrid(*[np.arange(v) for v in geo.out], indexing="ij"), -1).reshape(1, -1, n_sp)
    pos = o_idx * np.array(strides) + b_idx * np.array(dil) - np.array(geo.begin)
    inside = ((pos >= 0) & (pos < np.array(image))).all(-1)
    flat = np.ravel_multi_index(tuple(np.clip(pos, 0, np.array(image) - 1).transpose(2, 0, 1)), image)
    table = ctx.pack(f"col2im:{node.name}", np.where(inside, flat, -1).reshape(-1).astype(np.int64))
    planes, img, cols = n * (ck // k), int(np.prod(image)), k * length
    return "\n".join([
        "{",
        f"  const float *xp = {ctx.tensor(x)};",
        f"  float *yp = {ctx.tensor(y)};",
        f"  const int64_t *t = {table};",
        f"  memset(yp, 0, {ctx.size(y) * 4});",
        f"  for (long p = 0; p < {planes}; p++)",
        f"    for (long e = 0; e < {cols}; e++)",
        f"      if (t[e] >= 0) yp[p * {img} + t[e]] += xp[p * {cols} + e];",
        "}",
    ])  # fmt: skip
