"""Convolutions, pools, normalizations and matrix products in torch (the registry's conv.py, conv_transpose.py,
pool.py, normalization.py, matmul.py).

Padding follows the registry's one geometry rule (ops/_im2col.geometry: explicit pads, SAME_*, VALID, ceil_mode):
the input is padded (or cropped) explicitly, then torch's op runs unpadded.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ...ops._im2col import attr_list, geometry
from .registry import Call, op

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_MAXPOOL = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
_AVGPOOL = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}


def _pad(x: torch.Tensor, begin, end, value: float = 0.0) -> torch.Tensor:
    """Pads (or crops, for negative amounts) the spatial axes of x (N, C, *S): begin[i] and end[i] on axis i."""
    if not any(begin) and not any(end):
        return x
    flat = []
    for b, e in zip(reversed(list(begin)), reversed(list(end))):
        flat += [int(b), int(e)]
    return F.pad(x, flat, value=value)


def _window(c: Call, x, kernel, ceil_mode=0, clamp_same=True):
    """(strides, dilations, geometry, the end pads the windows reach) for x's shape, worked out once per shape."""
    key = ("window", tuple(x.shape[2:]), tuple(kernel), ceil_mode, clamp_same)
    if key not in c.memo:
        c.memo[key] = _window_of(c, x, kernel, ceil_mode, clamp_same)
    return c.memo[key]


def _window_of(c: Call, x, kernel, ceil_mode, clamp_same):
    n = x.dim() - 2
    strides = attr_list(c.attr("strides"), n, 1, "strides")
    dilations = attr_list(c.attr("dilations"), n, 1, "dilations")
    geo = geometry(
        x.shape[2:],
        kernel,
        strides,
        dilations,
        c.attr("pads"),
        c.attr("auto_pad", "NOTSET"),
        ceil_mode,
        clamp_same=clamp_same,
    )
    # the extent the windows reach: (out - 1) * stride + span, from the begin pad on
    end = [
        (o - 1) * s + (k - 1) * d + 1 - size - b
        for o, s, k, d, size, b in zip(geo.out, strides, kernel, dilations, x.shape[2:], geo.begin)
    ]
    return strides, dilations, geo, end


def _torch_padding(geo, end) -> list[int] | None:
    """The padding as torch's conv and pool take it, or None when theirs would differ: the model's pads the same
    on both sides (none negative) and no window reaching past them (ceil_mode), so that torch's output size
    floor((size + 2 pad - span) / stride) + 1 is the planned one."""
    begin, explicit = [int(b) for b in geo.begin], [int(e) for e in geo.end_explicit]
    if begin != explicit or min(begin, default=0) < 0 or any(int(e) > x for e, x in zip(end, explicit)):
        return None
    return begin


@op("Conv")
def conv(c: Call, x, w, b=None):
    n = x.dim() - 2
    strides, dilations, geo, end = _window(c, x, list(w.shape[2:]))
    same = _torch_padding(geo, end)  # torch pads inside the convolution: no separate pad (and its backward)
    xp = x if same is not None else _pad(x, geo.begin, end)
    padding = same if same is not None else 0
    return _CONV[n](xp, w, b, stride=strides, padding=padding, dilation=dilations, groups=c.attr("group", 1))


@op("ConvTranspose")
def conv_transpose(c: Call, x, w, b=None):
    n = x.dim() - 2
    strides = attr_list(c.attr("strides"), n, 1, "strides")
    dilations = attr_list(c.attr("dilations"), n, 1, "dilations")
    group = c.attr("group", 1)
    out_pad = attr_list(c.attr("output_padding"), n, 0, "output_padding")
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[n]
    y = _pad(fn(x, w, None, stride=strides, dilation=dilations, groups=group), [0] * n, out_pad)
    full = y.shape[2:]
    out = c.shape(0)[2:]  # the planned output: crop the full result as the pads (or output_shape, auto_pad) say
    pads, auto_pad = c.attr("pads"), c.attr("auto_pad", "NOTSET")
    begin = []
    for i in range(n):
        total = full[i] - out[i]
        if c.attr("output_shape") is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            begin.append(total // 2 if auto_pad == "SAME_UPPER" else total - total // 2)
        else:
            begin.append(int(pads[i]) if pads else 0)
    y = _pad(y, [0] * n, [max(0, b + o - f) for b, o, f in zip(begin, out, full)])  # output_shape past the end
    idx = (slice(None), slice(None), *(slice(b, b + o) for b, o in zip(begin, out)))
    y = y[idx]
    return y if b is None else y + b.reshape(1, -1, *([1] * n))


@op("MaxPool")
def max_pool(c: Call, x):
    n = x.dim() - 2
    kernel = attr_list(c.attr("kernel_shape"), n, 1, "kernel_shape")
    strides, dilations, geo, end = _window(c, x, kernel, c.attr("ceil_mode", 0), clamp_same=False)
    low = -math.inf if x.dtype.is_floating_point else torch.iinfo(x.dtype).min
    xp = _pad(x if x.dtype.is_floating_point else x.double(), geo.begin, end, low)
    y, where = _MAXPOOL[n](xp, kernel, strides, dilation=dilations, return_indices=True)
    if len(c.node.outputs) < 2 or not c.node.outputs[1]:
        return y.to(x.dtype)
    return y.to(x.dtype), _onnx_indices(where, xp.shape[2:], x.shape, geo.begin, c.attr("storage_order", 0))


def _onnx_indices(where, padded, shape, begin, storage_order: int):
    """torch's argmax positions (flat in the padded window plane) as ONNX's: flat over the unpadded (N, C, *S)
    tensor, row-major (or column-major over the spatial axes for storage_order 1)."""
    coords, rest = [], where
    for size in reversed(padded):
        coords.append(rest % size)
        rest = rest // size
    coords = [k - b for k, b in zip(reversed(coords), begin)]
    spatial = list(shape[2:])
    flat = torch.zeros_like(where)
    order = range(len(spatial)) if not storage_order else reversed(range(len(spatial)))
    for i in order:
        flat = flat * spatial[i] + coords[i]
    plane = int(math.prod(spatial))
    nc = torch.arange(shape[0] * shape[1], device=where.device).reshape(shape[0], shape[1], *([1] * len(spatial)))
    return nc * plane + flat


@op("AveragePool")
def average_pool(c: Call, x):
    n = x.dim() - 2
    kernel = attr_list(c.attr("kernel_shape"), n, 1, "kernel_shape")
    strides, dilations, geo, end = _window(c, x, kernel, c.attr("ceil_mode", 0), clamp_same=False)
    same = _torch_padding(geo, end)
    if same is not None and all(d == 1 for d in dilations) and all(2 * p <= k for p, k in zip(same, kernel)):
        include = bool(c.attr("count_include_pad", 0))  # torch's pool: the same windows and divisors as ONNX's
        return _AVGPOOL[n](x, kernel, strides, same, count_include_pad=include)
    xp = _pad(x, geo.begin, end)
    ones = torch.ones((1, 1, *x.shape[2:]), dtype=x.dtype, device=x.device)
    if c.attr("count_include_pad", 0):  # the explicit pads count, the ceil_mode overhang does not
        inner = _pad(ones, geo.begin, geo.end_explicit, 1.0)
        mask = _pad(inner, [0] * n, [e - x for e, x in zip(end, geo.end_explicit)])
    else:
        mask = _pad(ones, geo.begin, end)
    ch = x.shape[1]
    ones = torch.ones((ch, 1, *kernel), dtype=x.dtype, device=x.device)  # window sums as a depthwise conv
    total = _CONV[n](xp, ones, stride=strides, dilation=dilations, groups=ch)
    count = _CONV[n](mask, ones[:1], stride=strides, dilation=dilations)
    return total / count


@op("LpPool")
def lp_pool(c: Call, x):
    n = x.dim() - 2
    kernel = attr_list(c.attr("kernel_shape"), n, 1, "kernel_shape")
    strides, dilations, geo, end = _window(c, x, kernel, c.attr("ceil_mode", 0), clamp_same=False)
    p = c.attr("p", 2)
    ch = x.shape[1]
    ones = torch.ones((ch, 1, *kernel), dtype=x.dtype, device=x.device)
    total = _CONV[n](_pad(x.abs() ** p, geo.begin, end), ones, stride=strides, dilation=dilations, groups=ch)
    return total ** (1.0 / p)


@op("GlobalLpPool")
def global_lp_pool(c: Call, x):
    p = c.attr("p", 2)
    return (x.abs() ** p).sum(dim=tuple(range(2, x.dim())), keepdim=True) ** (1.0 / p)


@op("GlobalAveragePool")
def global_average_pool(c: Call, x):
    return x.mean(dim=tuple(range(2, x.dim())), keepdim=True)


@op("GlobalMaxPool")
def global_max_pool(c: Call, x):
    return x.amax(dim=tuple(range(2, x.dim())), keepdim=True)


# -- normalization ---------------------------------------------------------------------------------------------------
def _channel(t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return t.reshape(1, -1, *([1] * (x.dim() - 2)))


@op("BatchNormalization")
def batch_normalization(c: Call, x, scale, b, mean, var):
    """Inference form, or (a module in train mode, as torch.nn.BatchNorm) batch statistics with the running ones
    updated in place; the op's own training_mode (opset 14+) returns the updated statistics as outputs instead."""
    eps, m = c.attr("epsilon", 1e-5), c.attr("momentum", 0.9)
    if c.attr("training_mode", 0):
        if c.since < 14:
            raise ValueError("BatchNormalization in training mode before opset 14 is not supported on torch")
        dims = [0, *range(2, x.dim())]
        bm, bv = x.mean(dims), x.var(dims, unbiased=False)
        y = (x - _channel(bm, x)) / torch.sqrt(_channel(bv, x) + eps) * _channel(scale, x) + _channel(b, x)
        return tuple([y, mean * m + bm * (1 - m), var * m + bv * (1 - m)][: len(c.node.outputs)])
    if len([o for o in c.node.outputs if o]) > 1:
        raise ValueError("BatchNormalization's training outputs are not supported on torch")
    return F.batch_norm(x, mean, var, scale, b, training=c.training, momentum=1 - m, eps=eps)


@op("InstanceNormalization")
def instance_normalization(c: Call, x, scale, b):
    dims = tuple(range(2, x.dim()))
    mean = x.mean(dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dims, keepdim=True)
    return (x - mean) / torch.sqrt(var + c.attr("epsilon", 1e-5)) * _channel(scale, x) + _channel(b, x)


@op("LayerNormalization")
def layer_normalization(c: Call, x, scale, b=None):
    axis = c.attr("axis", -1) % x.dim()
    dims = tuple(range(axis, x.dim()))
    xf = x.float() if c.attr("stash_type", 1) == 1 and x.dtype != torch.float64 else x
    mean = xf.mean(dims, keepdim=True)
    var = ((xf - mean) ** 2).mean(dims, keepdim=True)
    inv = torch.rsqrt(var + c.attr("epsilon", 1e-5))
    y = ((xf - mean) * inv).to(x.dtype) * scale
    y = y if b is None else y + b
    outs = [y, mean.to(x.dtype), inv.to(x.dtype)]
    return tuple(outs[: len(c.node.outputs)])


@op("RMSNormalization")
def rms_normalization(c: Call, x, scale):
    axis = c.attr("axis", -1) % x.dim()
    dims = tuple(range(axis, x.dim()))
    xf = x.float() if x.dtype != torch.float64 else x
    y = xf * torch.rsqrt((xf * xf).mean(dims, keepdim=True) + c.attr("epsilon", 1e-5))
    return y.to(x.dtype) * scale


@op("GroupNormalization")
def group_normalization(c: Call, x, scale, bias):
    g = c.attr("num_groups")
    n, ch = x.shape[0], x.shape[1]
    xg = x.reshape(n, g, -1)
    mean = xg.mean(-1, keepdim=True)
    var = ((xg - mean) ** 2).mean(-1, keepdim=True)
    y = ((xg - mean) / torch.sqrt(var + c.attr("epsilon", 1e-5))).reshape(x.shape)
    if c.since < 21:  # opset 18: scale and bias per group
        scale, bias = scale.repeat_interleave(ch // g), bias.repeat_interleave(ch // g)
    return y * _channel(scale, x) + _channel(bias, x)


@op("LpNormalization")
def lp_normalization(c: Call, x):
    p = c.attr("p", 2)
    norm = x.abs().sum(c.attr("axis", -1), keepdim=True) if p == 1 else x.norm(2, c.attr("axis", -1), keepdim=True)
    return torch.where(norm == 0, torch.zeros_like(x), x / torch.where(norm == 0, torch.ones_like(norm), norm))


# -- matrix products -------------------------------------------------------------------------------------------------
@op("MatMul")
def matmul(c: Call, a, b):
    return torch.matmul(a, b)


@op("Gemm")
def gemm(c: Call, a, b, bias=None):
    alpha, beta = c.attr("alpha", 1.0), c.attr("beta", 1.0)
    linear = c.attr("transB", 0) and not c.attr("transA", 0) and alpha == 1 and beta == 1
    if linear and (bias is None or bias.dim() == 1):
        return F.linear(a, b, bias)  # torch.nn.Linear's own op: one fused matmul and bias (forward and backward)
    a = a.t() if c.attr("transA", 0) else a
    b = b.t() if c.attr("transB", 0) else b
    y = a @ b if alpha == 1 else alpha * (a @ b)
    return y if bias is None else y + (bias if beta == 1 else beta * bias)


@op("Einsum")
def einsum(c: Call, *xs):
    return torch.einsum(c.attr("equation").replace(" ", ""), *xs)


@op("GridSample")
def grid_sample(c: Call, x, grid):
    mode = c.attr("mode", "linear" if c.since >= 20 else "bilinear")
    mode = {"linear": "bilinear", "cubic": "bicubic"}.get(mode, mode)
    return F.grid_sample(
        x,
        grid.to(x.dtype),
        mode=mode,
        padding_mode=c.attr("padding_mode", "zeros"),
        align_corners=bool(c.attr("align_corners", 0)),
    )
