"""burnedge's int8 ops in torch (the registry's quantized.py), bit for bit: integer arithmetic on int64 tensors.

The numpy functions in `burnedge.ops.quantized` are the spec; these compute the same integers the same way, so an
int8 graph run by torch gives the bytes the numpy reference and the C kernels give (what quantization-aware
training evaluates with, `burnedge.train.qat`):

- products are summed in float64 (exact: int8 products summed stay far below 2^53) and rounded to int64;
- requantisation is `burnedge.ops.fixedpoint.requantize`'s rule: ``acc * m`` exactly in int64, one rounding (half
  up) by an arithmetic shift of ``31 - shift`` bits, the zero point, saturation;
- averages divide with `round_div` (half away from zero), QAdd rounds once with `round_shift`.
"""

from __future__ import annotations

import torch

from ...ops.fixedpoint import INT8_MAX, INT8_MIN
from .ops_nn import conv
from .registry import Call, op

__all__ = ["requantize", "round_div", "round_shift"]


def _along(p, ndim: int, axis: int | None, device) -> torch.Tensor:
    """An int attribute (one value, or one per channel) as an int64 tensor broadcasting along `axis`."""
    t = torch.as_tensor(p, dtype=torch.int64, device=device)
    if t.dim() == 0 or axis is None:
        return t
    shape = [1] * ndim
    shape[axis % ndim] = t.numel()
    return t.reshape(shape)


def round_shift(v: torch.Tensor, s: torch.Tensor | int) -> torch.Tensor:
    """floor((v + 2^(s-1)) / 2^s) on int64 (s >= 1): `fixedpoint.round_shift`."""
    s = torch.as_tensor(s, dtype=torch.int64, device=v.device)
    return torch.bitwise_right_shift(v + torch.bitwise_left_shift(torch.ones_like(s), s - 1), s)


def round_div(a: torch.Tensor, n: torch.Tensor | int) -> torch.Tensor:
    """a / n rounded half away from zero (n > 0): `fixedpoint.round_div`."""
    n = torch.as_tensor(n, dtype=torch.int64, device=a.device)
    mag = torch.div(a.abs() + torch.div(n, 2, rounding_mode="floor"), n, rounding_mode="floor")
    return torch.where(a >= 0, mag, -mag)


def requantize(acc, m, shift, zero_point: int, qmin: int, qmax: int, axis: int | None = None) -> torch.Tensor:
    """`fixedpoint.requantize` on an int64 tensor of int32 accumulators; an int8 result."""
    a = acc.to(torch.int64)
    m64, sh = _along(m, a.dim(), axis, a.device), _along(shift, a.dim(), axis, a.device)
    v = a * m64
    s = 31 - sh
    down = round_shift(v, torch.clamp(s, 1, 63))
    up = torch.clamp(v, -(2**31), 2**31) * torch.bitwise_left_shift(torch.ones_like(s), torch.clamp(-s, 0, 31))
    y = torch.where(s >= 1, down, up) + int(zero_point)
    return torch.clamp(y, qmin, qmax).to(torch.int8)


def _acc(product: torch.Tensor, bias, channel_axis: int) -> torch.Tensor:
    acc = torch.round(product).to(torch.int64)
    if bias is not None:
        shape = [1] * acc.dim()
        shape[channel_axis % acc.dim()] = -1
        acc = acc + bias.to(torch.int64).reshape(shape)
    return acc


@op("QConv", domain="burnedge")
def qconv(c: Call, x, w, bias=None):
    xs = x.to(torch.float64) - c.attr("x_zero_point", 0)  # padding then contributes 0, as in the spec
    acc = _acc(conv(c, xs, w.to(torch.float64)), bias, 1)
    return requantize(acc, c.attr("multiplier"), c.attr("shift"), c.attr("y_zero_point", 0),
                      c.attr("y_min", INT8_MIN), c.attr("y_max", INT8_MAX), axis=1)  # fmt: skip


@op("QMatMul", domain="burnedge")
def qmatmul(c: Call, a, b, bias=None):
    acc = _acc((a.to(torch.float64) - c.attr("a_zero_point", 0)) @ b.to(torch.float64), bias, -1)
    return requantize(acc, c.attr("multiplier"), c.attr("shift"), c.attr("y_zero_point", 0),
                      c.attr("y_min", INT8_MIN), c.attr("y_max", INT8_MAX), axis=acc.dim() - 1)  # fmt: skip


@op("QAdd", domain="burnedge")
def qadd(c: Call, a, b):
    va = (a.to(torch.int64) - c.attr("a_zero_point", 0)) * c.attr("a_multiplier")
    vb = (b.to(torch.int64) - c.attr("b_zero_point", 0)) * c.attr("b_multiplier")
    y = c.attr("y_zero_point", 0) + round_shift(va + vb, c.attr("shift"))
    return torch.clamp(y, c.attr("y_min", INT8_MIN), c.attr("y_max", INT8_MAX)).to(torch.int8)


@op("QMul", domain="burnedge")
def qmul(c: Call, a, b):
    acc = (a.to(torch.int64) - c.attr("a_zero_point", 0)) * (b.to(torch.int64) - c.attr("b_zero_point", 0))
    return requantize(acc, c.attr("multiplier"), c.attr("shift"), c.attr("y_zero_point", 0),
                      c.attr("y_min", INT8_MIN), c.attr("y_max", INT8_MAX))  # fmt: skip


@op("QLut", domain="burnedge")
def qlut(c: Call, x):
    table = torch.as_tensor(c.attr("table"), dtype=torch.int8, device=x.device)
    if table.shape != (256,):
        raise ValueError(f"QLut needs a table of 256 int8 values, got shape {list(table.shape)}")
    return table[x.to(torch.int64) + 128]


@op("QSoftmax", domain="burnedge")
def qsoftmax(c: Call, x):
    axis = c.attr("axis", -1)
    table = torch.as_tensor(c.attr("table"), dtype=torch.int64, device=x.device)
    xi = x.to(torch.int64)
    e = table[xi.amax(dim=axis, keepdim=True) - xi]
    y = round_div(e * 256, e.sum(dim=axis, keepdim=True)) - 128
    return torch.clamp(y, -128, 127).to(torch.int8)


@op("QGlobalAvgPool", domain="burnedge")
def qglobal_avg_pool(c: Call, x):
    zp = c.attr("zero_point", 0)
    axes = tuple(range(2, x.dim()))
    total = (x.to(torch.int64) - zp).sum(dim=axes, keepdim=True)
    count = 1
    for a in axes:
        count *= x.shape[a]
    return torch.clamp(zp + round_div(total, count), -128, 127).to(torch.int8)


@op("QRequant", domain="burnedge")
def qrequant(c: Call, x):
    acc = x.to(torch.int64) - c.attr("x_zero_point", 0)
    return requantize(acc, c.attr("multiplier"), c.attr("shift"), c.attr("y_zero_point", 0), INT8_MIN, INT8_MAX)
