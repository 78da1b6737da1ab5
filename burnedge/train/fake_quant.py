"""Fake quantization in torch with burnedge's int8 scheme, and straight-through gradients (the QAT forward).

Each function rounds a float tensor to the values its int8 form can hold, exactly as `burnedge.quantize.qparams`
does (float32 division by the scale, round half to even, saturation), and lets the gradient through:

- `activation`: asymmetric per tensor, [qmin, qmax] (QuantizeLinear then DequantizeLinear); the gradient is 1
  where the value lies inside the representable range and 0 where it saturated (the clipped straight-through
  estimator: pushing a clamped value further changes nothing, so training learns nothing from it);
- `weight`: symmetric per output channel, [-127, 127], plain straight-through (the scale holds max|w| of the
  channel, so only a floored scale saturates anything);
- `bias`: int32 at scale ``s_in * s_w``, rounded in float64 as `quantize_bias` does, straight-through.

The scales are not learned: they are what burnedge computes (`weight_scales` recomputes the weights' from the
current weights at every step, as the conversion will; activation scales come from the calibration).
"""

from __future__ import annotations

import numpy as np
import torch

from ..ops.fixedpoint import INT32_MAX, INT32_MIN
from ..quantize.accumulators import weight_floor
from ..quantize.qparams import QParams, bias_qparams, weight_qparams

__all__ = ["activation", "bias", "weight", "weight_scales"]


def _along(scale: np.ndarray, ndim: int, axis: int, device: torch.device) -> torch.Tensor:
    shape = [1] * ndim
    shape[axis % ndim] = -1
    return torch.tensor(np.array(scale, np.float32), device=device).reshape(shape)


def activation(x: torch.Tensor, qp: QParams) -> torch.Tensor:
    """x through int8 and back under the per-tensor `qp`, with the clipped straight-through gradient."""
    xf = x.float()
    scale = torch.tensor(float(qp.scale), dtype=torch.float32, device=x.device)
    q = torch.round(xf / scale) + qp.zero_point
    inside = (q >= qp.qmin) & (q <= qp.qmax)
    y = (torch.clamp(q, qp.qmin, qp.qmax) - qp.zero_point) * scale
    return (y.detach() + (xf - xf.detach()) * inside).to(x.dtype)


def weight_scales(w: torch.Tensor, b: torch.Tensor | None, qp_x: QParams, axis: int) -> tuple[QParams, QParams]:
    """(weight QParams, bias QParams) burnedge gives these weights now (`quantize.accumulators.int8_weights`'s
    floored per-channel scales), from a host copy of them."""
    wn = w.detach().float().cpu().numpy()
    bn = None if b is None else b.detach().float().cpu().numpy().reshape(-1)
    wqp = weight_qparams(wn, axis=axis, min_scale=weight_floor(wn, bn, qp_x, axis))
    return wqp, bias_qparams(qp_x.scale, wqp)


def weight(w: torch.Tensor, qp: QParams) -> torch.Tensor:
    """w rounded to its int8 levels per output channel (axis ``qp.axis``), straight-through."""
    scale = _along(qp.scale, w.dim(), qp.axis, w.device)
    y = torch.clamp(torch.round(w.float() / scale), -127, 127) * scale
    return w + (y.to(w.dtype) - w).detach()


def bias(b: torch.Tensor, qp: QParams) -> torch.Tensor:
    """b rounded to int32 steps of ``s_in * s_w`` (one per channel), straight-through."""
    scale = torch.tensor(np.array(qp.scale, np.float64), device=b.device).reshape(b.shape)
    y = torch.clamp(torch.round(b.double() / scale), INT32_MIN, INT32_MAX) * scale
    return b + (y.to(b.dtype) - b).detach()
