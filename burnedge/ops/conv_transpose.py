"""Transposed convolution and col2im: ConvTranspose (opset 1+) and Col2Im (opset 18+), 1D/2D/3D.

ConvTranspose is one batched matmul (groups as the batch axis) giving every input pixel's kernel-sized patch,
summed into the output with one strided add per kernel position (col2im), then cropped to the output window
(pads, output_padding, output_shape, auto_pad).
"""

from __future__ import annotations

import math

import numpy as np

from . import Spec, register
from ._im2col import attr_list, compute_dtype, geometry, pad_or_crop, scatter_add_windows


def _ct_geometry(x_shape, w_shape, auto_pad, dilations, group, kernel_shape, output_padding, output_shape, pads,
                 strides):  # fmt: skip
    """kernel, strides, dilations, full (uncropped) size, output begin offsets and output size per spatial axis."""
    n_sp = len(x_shape) - 2
    kernel = [int(k) for k in w_shape[2:]]
    if kernel_shape and list(kernel_shape) != kernel:
        raise ValueError(f"kernel_shape {list(kernel_shape)} does not match the weight's shape {list(w_shape)}")
    strides = attr_list(strides, n_sp, 1, "strides")
    dilations = attr_list(dilations, n_sp, 1, "dilations")
    opad = attr_list(output_padding, n_sp, 0, "output_padding")
    auto_pad = auto_pad or "NOTSET"
    spatial = [int(d) for d in x_shape[2:]]
    full = [(spatial[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 for i in range(n_sp)]
    if output_shape:
        target = [int(v) for v in output_shape][-n_sp:]
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        target = [spatial[i] * strides[i] for i in range(n_sp)]
    else:
        target = None
    if target is not None:
        begin, out = [], target
        for i in range(n_sp):
            total = full[i] + opad[i] - target[i]
            if total < 0:
                begin.append(0)
            else:
                begin.append(total // 2 if auto_pad == "SAME_UPPER" else total - total // 2)
    else:
        p = attr_list(pads, 2 * n_sp, 0, "pads") if auto_pad == "NOTSET" else [0] * (2 * n_sp)
        begin = p[:n_sp]
        out = [full[i] + opad[i] - p[i] - p[n_sp + i] for i in range(n_sp)]
    if w_shape[0] != x_shape[1] or x_shape[1] % group:
        raise ValueError(f"input {list(x_shape)} and weight {list(w_shape)} do not fit group={group}")
    return kernel, strides, dilations, full, begin, out


def _infer(x, w, b=None, *, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, output_padding=None,
           output_shape=None, pads=None, strides=None):  # fmt: skip
    geo = _ct_geometry(
        x.shape, w.shape, auto_pad, dilations, group, kernel_shape, output_padding, output_shape, pads, strides
    )
    return [Spec((x.shape[0], w.shape[1] * group, *geo[5]), x.dtype)]


@register("ConvTranspose", since=1, infer=_infer)
def conv_transpose(
    x, w, b=None, *, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, output_padding=None,
    output_shape=None, pads=None, strides=None,
):  # fmt: skip
    """ONNX ConvTranspose, opsets 1, 11 and 22 (the same attributes)."""
    kernel, strides, dilations, full, begin, out = _ct_geometry(
        x.shape, w.shape, auto_pad, dilations, group, kernel_shape, output_padding, output_shape, pads, strides
    )
    ct = compute_dtype(x.dtype)
    n, c = x.shape[:2]
    mg = w.shape[1]
    k = math.prod(kernel)
    wt = w.astype(ct, copy=False).reshape(group, c // group, mg * k).transpose(0, 2, 1)  # (G, Mg*K, Cg)
    xs = x.astype(ct, copy=False).reshape(n, group, c // group, -1)
    cols = np.matmul(wt, xs).reshape(n, group * mg, *kernel, *x.shape[2:])
    y = scatter_add_windows(cols, full, kernel, strides, dilations, x.shape[2:])
    y = pad_or_crop(y, [-v for v in begin], [out[i] - full[i] + begin[i] for i in range(len(out))])
    if b is not None:
        y += b.astype(ct).reshape((1, -1) + (1,) * len(out))
    return y.astype(x.dtype, copy=False)


@register("Col2Im", since=18, static=(1, 2))
def col2im(x, image_shape, block_shape, *, dilations=None, pads=None, strides=None):
    """ONNX Col2Im (opset 18): sums the columns (N, C*prod(block), L) back into images (N, C, *image_shape)."""
    image = [int(v) for v in np.asarray(image_shape).reshape(-1)]
    block = [int(v) for v in np.asarray(block_shape).reshape(-1)]
    n_sp = len(image)
    strides = attr_list(strides, n_sp, 1, "strides")
    dilations = attr_list(dilations, n_sp, 1, "dilations")
    geo = geometry(image, block, strides, dilations, pads)
    k = math.prod(block)
    n, ck, length = x.shape
    if ck % k or length != math.prod(geo.out):
        raise ValueError(f"input {list(x.shape)} does not fit block {block} and {geo.out} blocks")
    ct = compute_dtype(x.dtype) if x.dtype.kind == "f" else x.dtype
    cols = x.astype(ct, copy=False).reshape(n, ck // k, *block, *geo.out)
    full = [(geo.out[i] - 1) * strides[i] + (block[i] - 1) * dilations[i] + 1 for i in range(n_sp)]
    y = scatter_add_windows(cols, full, block, strides, dilations, geo.out)
    y = pad_or_crop(y, [-v for v in geo.begin], [image[i] - full[i] + geo.begin[i] for i in range(n_sp)])
    return y.astype(x.dtype, copy=False)
