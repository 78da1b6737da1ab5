"""Losses, quantize / dequantize, integer products and indexing ops in torch (the registry's loss.py,
quantize_linear.py, matmul.py MatMulInteger / QLinearMatMul, select_ops.py OneHot, gather_scatter.py GatherND /
ScatterND, generators.py EyeLike, scan_ops.py CumProd).

Integer products run in float64, exact for 8-bit operands (as the reference computes them), then round once."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .registry import Call, op


def _nll(c: Call, logp, target, weight):
    ignore = c.attr("ignore_index")
    return F.nll_loss(
        logp,
        target.long(),
        weight=weight,
        ignore_index=-100 if ignore is None else int(ignore),
        reduction=c.attr("reduction", "mean"),
    )


@op("NegativeLogLikelihoodLoss")
def negative_log_likelihood_loss(c: Call, x, target, weight=None):
    return _nll(c, x, target, weight)


@op("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy_loss(c: Call, scores, labels, weights=None):
    logp = torch.log_softmax(scores, 1)
    return (_nll(c, logp, labels, weights), logp)[: len(c.node.outputs)]


def _per_axis(p, x, axis: int):
    """A scale or zero point: one value, or one per channel of `axis`, shaped to broadcast over x."""
    if p.numel() == 1:
        return p.reshape(())
    shape = [1] * x.dim()
    shape[axis % x.dim()] = -1
    return p.reshape(shape)


@op("QuantizeLinear")
def quantize_linear(c: Call, x, scale, zp=None):
    if c.attr("block_size", 0):
        raise ValueError("blocked QuantizeLinear is not supported on torch")
    out = c.dtype(0)
    if out.is_floating_point:
        raise ValueError(f"QuantizeLinear to {out} is not supported on torch")
    axis = c.attr("axis", 1)
    q = torch.round(x.float() / _per_axis(scale, x, axis).float())  # half to even, as ONNX
    if zp is not None:
        q = q + _per_axis(zp, x, axis).float()
    info = torch.iinfo(out)
    return torch.clamp(q, info.min, info.max).to(out)


@op("DequantizeLinear")
def dequantize_linear(c: Call, x, scale, zp=None):
    if c.attr("block_size", 0):
        raise ValueError("blocked DequantizeLinear is not supported on torch")
    axis = c.attr("axis", 1)
    v = x.double() if x.dtype == torch.int32 else x.float()
    if zp is not None:
        v = v - _per_axis(zp, x, axis).to(v.dtype)
    return (v * _per_axis(scale, x, axis).to(v.dtype)).to(c.dtype(0))


def _per_row(v, a):
    """A zero point or scale for a's rows: a scalar, or one per row (1-D of length M, along axis -2)."""
    return v.reshape(-1, 1) if v.dim() == 1 and v.numel() > 1 and a.dim() >= 2 else v


def _int_product(a, b, a_zp, b_zp):
    af, bf = a.double(), b.double()
    if a_zp is not None:
        af = af - _per_row(a_zp, a).double()
    if b_zp is not None:
        bf = bf - b_zp.double()
    return torch.round(af @ bf)


@op("MatMulInteger")
def matmul_integer(c: Call, a, b, a_zp=None, b_zp=None):
    return _int_product(a, b, a_zp, b_zp)


@op("QLinearMatMul")
def qlinear_matmul(c: Call, a, sa, a_zp, b, sb, b_zp, sy, y_zp):
    acc = _int_product(a, b, a_zp, b_zp).float()
    y = torch.round(acc * (_per_row(sa, a).float() * sb.float() / sy.float())) + y_zp.float()
    info = torch.iinfo(y_zp.dtype)
    return torch.clamp(y, info.min, info.max)


@op("OneHot")
def one_hot(c: Call, indices, depth, values):
    d = int(c.ints(1, depth)[0])
    i = indices.long()
    i = torch.where(i < 0, i + d, i)
    valid = (i >= 0) & (i < d)
    hot = F.one_hot(torch.where(valid, i, torch.zeros_like(i)), d) * valid.unsqueeze(-1)
    out = torch.where(hot.bool(), values[1], values[0])
    axis = c.attr("axis", -1)
    return out.movedim(-1, axis if axis >= 0 else out.dim() + axis)


def _nd_index(data, idx, batch_dims: int):
    """(data reshaped to (B, ...), indices as (B, L, k) with negatives wrapped, the batch index (B, L))."""
    b = math.prod(data.shape[:batch_dims])
    k = idx.shape[-1]
    d = data.reshape(b, *data.shape[batch_dims:])
    i = idx.reshape(b, -1, k).long()
    sizes = torch.tensor(d.shape[1 : 1 + k], device=i.device)
    i = torch.where(i < 0, i + sizes, i)
    return d, i, torch.arange(b, device=i.device)[:, None].expand(b, i.shape[1])


@op("GatherND")
def gather_nd(c: Call, data, idx):
    bd = c.attr("batch_dims", 0)
    d, i, batch = _nd_index(data, idx, bd)
    out = d[(batch, *i.unbind(-1))]
    return out.reshape(*idx.shape[:-1], *data.shape[bd + idx.shape[-1] :])


@op("ScatterND")
def scatter_nd(c: Call, data, idx, updates):
    red = c.attr("reduction", "none")
    if red not in ("none", "add"):
        raise ValueError(f"ScatterND reduction {red!r} is not supported on torch")
    k = idx.shape[-1]
    i = idx.reshape(-1, k).long()
    i = torch.where(i < 0, i + torch.tensor(data.shape[:k], device=i.device), i)
    u = updates.reshape(i.shape[0], *data.shape[k:])
    return data.index_put(tuple(i.unbind(-1)), u, accumulate=red == "add")


@op("EyeLike")
def eye_like(c: Call, x):
    n, m = x.shape
    rows = torch.arange(n, device=x.device)[:, None]
    cols = torch.arange(m, device=x.device)[None, :]
    return (cols - rows == c.attr("k", 0)).to(c.dtype(0))


@op("CumProd")
def cum_prod(c: Call, x, axis):
    a = c.ints(1, axis)[0] % x.dim()
    reverse = c.attr("reverse", 0)
    y = x.flip(a) if reverse else x
    if c.attr("exclusive", 0):  # shift by one: the first product is 1
        y = torch.cat([torch.ones_like(y.narrow(a, 0, 1)), y.narrow(a, 0, y.shape[a] - 1)], a)
    out = torch.cumprod(y, a)
    return out.flip(a) if reverse else out
