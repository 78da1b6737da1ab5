"""Traced normalizations with torch.nn.functional's signatures: layer_norm, group_norm, batch_norm."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._math import clamp, floating
from ._state import current

__all__ = ["batch_norm", "group_norm", "layer_norm", "normalize"]


def _affine(tr, value: Any, shape: tuple[int, ...], fill: float, dtype: np.dtype, what: str) -> Any:
    if value is None:
        return tr.lift(np.full(shape, fill, dtype))
    t = tr.lift(value, dtype)
    if t.shape != shape:
        raise tr.error(f"{what} has shape {list(t.shape)}; expected {list(shape)}")
    return t


def layer_norm(
    input: Any, normalized_shape: Sequence[int] | int, weight: Any = None, bias: Any = None, eps: float = 1e-5
) -> Any:
    """Normalizes over the trailing `normalized_shape` dims (ONNX LayerNormalization)."""
    tr = current()
    x = floating(input)
    shape = (int(normalized_shape),) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
    if x.shape[x.ndim - len(shape) :] != shape or len(shape) > x.ndim:
        raise tr.error(f"expected input whose trailing dims are {list(shape)}, got shape {list(x.shape)}")
    scale = _affine(tr, weight, shape, 1.0, x.dtype, "layer_norm weight")
    b = None if bias is None else _affine(tr, bias, shape, 0.0, x.dtype, "layer_norm bias")
    return tr.op("LayerNormalization", x, scale, b, axis=-len(shape), epsilon=float(eps))


def group_norm(input: Any, num_groups: int, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> Any:
    """Normalizes (N, C, *) input over groups of C / num_groups channels (ONNX GroupNormalization-21)."""
    tr = current()
    x = floating(input)
    if x.ndim < 2:
        raise tr.error(f"group_norm expects (N, C, ...) input, got shape {list(x.shape)}")
    c = x.shape[1]
    if c % num_groups:
        raise tr.error(f"expected the {c} input channels to divide into {num_groups} groups")
    scale = _affine(tr, weight, (c,), 1.0, x.dtype, "group_norm weight")
    b = _affine(tr, bias, (c,), 0.0, x.dtype, "group_norm bias")
    return tr.op("GroupNormalization", x, scale, b, num_groups=int(num_groups), epsilon=float(eps))


def batch_norm(
    input: Any,
    running_mean: Any,
    running_var: Any,
    weight: Any = None,
    bias: Any = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Any:
    """(N, C, *) input normalized per channel: by the running statistics (inference, ONNX BatchNormalization),
    or by the batch's own when `training` or when there are no running statistics (what torch does then)."""
    tr = current()
    x = floating(input)
    if x.ndim < 2:
        raise tr.error(f"batch_norm expects (N, C, ...) input, got shape {list(x.shape)}")
    c = x.shape[1]
    scale = _affine(tr, weight, (c,), 1.0, x.dtype, "batch_norm weight")
    b = _affine(tr, bias, (c,), 0.0, x.dtype, "batch_norm bias")
    if not training and running_mean is not None and running_var is not None:
        mean = _affine(tr, running_mean, (c,), 0.0, x.dtype, "running_mean")
        var = _affine(tr, running_var, (c,), 1.0, x.dtype, "running_var")
        return tr.op("BatchNormalization", x, scale, b, mean, var, epsilon=float(eps))
    axes = tr.ints([0, *range(2, x.ndim)])
    mean = tr.op("ReduceMean", x, axes, keepdims=1)
    centred = tr.op("Sub", x, mean)
    var = tr.op("ReduceMean", tr.op("Mul", centred, centred), axes, keepdims=1)
    inv = tr.op("Sqrt", tr.op("Add", var, tr.lift(eps, x.dtype)))
    per_channel = tr.ints([c] + [1] * (x.ndim - 2))
    y = tr.op("Div", centred, inv)
    return tr.op("Add", tr.op("Mul", y, tr.op("Reshape", scale, per_channel)), tr.op("Reshape", b, per_channel))


def normalize(input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Any:
    """x / max(||x||_p over `dim`, eps) (torch's F.normalize; sentence embeddings use it)."""
    tr = current()
    x = floating(input)
    axis = tr.axis(dim, x.ndim)
    if p == 2.0:
        norm = tr.op("Sqrt", tr.op("ReduceSum", tr.op("Mul", x, x), tr.ints([axis]), keepdims=1))
    elif p == 1.0:
        norm = tr.op("ReduceSum", tr.op("Abs", x), tr.ints([axis]), keepdims=1)
    else:
        raise tr.error(f"normalize supports p=1 and p=2, not {p}")
    return tr.op("Div", x, clamp(norm, min=eps))
