"""Normalization ops: BatchNormalization, InstanceNormalization, LayerNormalization, GroupNormalization, ...

Spec: https://onnx.ai/onnx/operators/. Versions: BatchNormalization 1 (consumed_inputs, is_test, spatial), 6
(is_test, spatial), 7 (spatial; training when more than one output), 9 (training when more than one output),
14..15 (training_mode; outputs Y, running_mean, running_var); InstanceNormalization 1 (consumed_inputs), 6..22;
LayerNormalization 17 (stash_type; Mean and InvStdDev outputs); GroupNormalization 18 (scale and bias per group)
and 21 (per channel, stash_type); RMSNormalization 23; LpNormalization 1..22; MeanVarianceNormalization 9..13;
LRN 1..13. Outputs keep the input dtype; every float type computes in float64 and rounds once (SUM_DTYPE in
_common: float32 means and variances drift), so a stash_type gets at least the precision it asks for.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from . import register
from ._common import as_axes, norm_axis, same_dtype
from ._common import sum_work as _work

_STASH = {1: np.float32, 10: np.float32, 11: np.float64, 16: np.float32}  # ONNX float type -> compute dtype


def _stash(stash_type: int) -> np.dtype:
    """The dtype statistics are computed in for an ONNX `stash_type` (float16 and bfloat16 in float32)."""
    if stash_type not in _STASH:
        raise ValueError(f"stash_type {stash_type} is not a float type")
    return np.dtype(_STASH[stash_type])


def _per_channel(v: np.ndarray, rank: int) -> np.ndarray:
    """A [C] vector shaped to broadcast along dim 1 of a rank-`rank` tensor."""
    return v.reshape((-1,) + (1,) * max(rank - 2, 0))


# -- BatchNormalization -------------------------------------------------------------------------------------------
def _batchnorm(x, scale, b, mean, var, epsilon, momentum, training, spatial, n_out, legacy_outputs):
    """Shared body. `spatial=False`: scale/B/mean/var have x.shape[1:] (one value per activation)."""
    w = _work(x)
    if x.ndim < 2:
        raise ValueError(f"BatchNormalization needs an input of rank >= 2, not {x.ndim}")
    if spatial:
        shape = (-1,) + (1,) * (x.ndim - 2)
        axes = (0,) + tuple(range(2, x.ndim))
    else:
        shape = x.shape[1:]
        axes = (0,)

    def param(v):
        return np.asarray(v).astype(w.dtype, copy=False).reshape(shape)

    if training:
        cur_mean = w.mean(axis=axes)
        cur_var = np.mean(np.square(w - cur_mean.reshape(shape)), axis=axes)
        use_mean, use_var = cur_mean, cur_var
    else:
        use_mean, use_var = mean, var
    k = param(scale) / np.sqrt(param(use_var) + w.dtype.type(epsilon))
    y = same_dtype(w * k + (param(b) - param(use_mean) * k), x)
    if n_out <= 1:
        return y
    if not training:  # extra outputs of an inference node (old exporters list them): the statistics pass through
        extras = (mean.copy(), var.copy(), mean.copy(), var.copy())
        return (y,) + extras[: (4 if legacy_outputs else 2)]
    m = momentum
    run_mean = same_dtype(mean * m + cur_mean.reshape(mean.shape) * (1 - m), mean)
    run_var = same_dtype(var * m + cur_var.reshape(var.shape) * (1 - m), var)
    if not legacy_outputs:
        return y, run_mean, run_var
    # saved_var: ONNX Runtime (the de facto reference) stores the inverse standard deviation 1/sqrt(var + eps)
    saved_inv_std = (1 / np.sqrt(cur_var + w.dtype.type(epsilon))).reshape(var.shape)
    return y, run_mean, run_var, same_dtype(cur_mean.reshape(mean.shape), mean), same_dtype(saved_inv_std, var)


@register("BatchNormalization", 1, 5)
def batch_normalization_v1(
    x, scale, b, mean, var, *, consumed_inputs=None, epsilon=1e-5, is_test=0, momentum=0.9, spatial=1, _n_outputs=1
):
    """ONNX BatchNormalization opset 1 (training when is_test=0 and several outputs are asked for)."""
    training = not is_test and _n_outputs > 1
    return _batchnorm(x, scale, b, mean, var, epsilon, momentum, training, spatial, _n_outputs, True)


@register("BatchNormalization", 6)
def batch_normalization_v6(x, scale, b, mean, var, *, epsilon=1e-5, is_test=0, momentum=0.9, spatial=1, _n_outputs=1):
    """ONNX BatchNormalization opset 6."""
    training = not is_test and _n_outputs > 1
    return _batchnorm(x, scale, b, mean, var, epsilon, momentum, training, spatial, _n_outputs, True)


@register("BatchNormalization", 7)
def batch_normalization_v7(x, scale, b, mean, var, *, epsilon=1e-5, momentum=0.9, spatial=1, _n_outputs=1):
    """ONNX BatchNormalization opset 7 (training when more than one output is asked for)."""
    return _batchnorm(x, scale, b, mean, var, epsilon, momentum, _n_outputs > 1, spatial, _n_outputs, True)


@register("BatchNormalization", 9)
def batch_normalization_v9(x, scale, b, mean, var, *, epsilon=1e-5, momentum=0.9, _n_outputs=1):
    """ONNX BatchNormalization opset 9 (training when more than one output is asked for)."""
    return _batchnorm(x, scale, b, mean, var, epsilon, momentum, _n_outputs > 1, True, _n_outputs, True)


@register("BatchNormalization", 14)
def batch_normalization(x, scale, b, input_mean, input_var, *, epsilon=1e-5, momentum=0.9, training_mode=0):
    """ONNX BatchNormalization opset 14..15 (training_mode=1 also gives running_mean and running_var)."""
    n_out = 3 if training_mode else 1
    return _batchnorm(x, scale, b, input_mean, input_var, epsilon, momentum, bool(training_mode), True, n_out, False)


# -- InstanceNormalization ----------------------------------------------------------------------------------------
def _instance_norm(x, scale, b, epsilon):
    w = _work(x)
    axes = tuple(range(2, x.ndim))
    mean = w.mean(axis=axes, keepdims=True)
    d = w - mean
    var = np.mean(d * d, axis=axes, keepdims=True)
    s = _per_channel(scale.astype(w.dtype, copy=False), x.ndim)
    y = d * (s / np.sqrt(var + w.dtype.type(epsilon))) + _per_channel(b.astype(w.dtype, copy=False), x.ndim)
    return same_dtype(y, x)


@register("InstanceNormalization", 1, 5)
def instance_normalization_v1(x, scale, b, *, epsilon=1e-5, consumed_inputs=None):
    """ONNX InstanceNormalization opset 1."""
    return _instance_norm(x, scale, b, epsilon)


@register("InstanceNormalization", 6)
def instance_normalization(x, scale, b, *, epsilon=1e-5):
    """ONNX InstanceNormalization opset 6..22."""
    return _instance_norm(x, scale, b, epsilon)


# -- LayerNormalization / RMSNormalization / GroupNormalization ---------------------------------------------------
@register("LayerNormalization", 17)
def layer_normalization(x, scale, b=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    """ONNX LayerNormalization opset 17: Y, Mean and InvStdDev (the last two in the stash type)."""
    st = _stash(stash_type)
    a = norm_axis(axis, x.ndim)
    axes = tuple(range(a, x.ndim))
    w = _work(x)  # statistics in float64, whatever the stash type (at least as precise as it asks)
    mean = w.mean(axis=axes, keepdims=True)
    d = w - mean
    inv = 1 / np.sqrt(np.mean(d * d, axis=axes, keepdims=True) + st.type(epsilon))
    y = _work(same_dtype(d * inv, x))
    y = y * scale.astype(y.dtype, copy=False)
    if b is not None:
        y = y + b.astype(y.dtype, copy=False)
    u = dtypes.from_onnx(stash_type)
    return same_dtype(y, x), mean.astype(u), inv.astype(u)


@register("RMSNormalization", 23)
def rms_normalization(x, scale, *, axis=-1, epsilon=1e-5, stash_type=1):
    """ONNX RMSNormalization opset 23: X / sqrt(mean(X^2 over axes [axis, rank)) + epsilon) * scale."""
    st = _stash(stash_type)
    a = norm_axis(axis, x.ndim)
    w = _work(x)  # statistics in float64, whatever the stash type (at least as precise as it asks)
    rms = np.sqrt(np.mean(w * w, axis=tuple(range(a, x.ndim)), keepdims=True) + st.type(epsilon))
    y = _work(same_dtype(w / rms, x))
    return same_dtype(y * scale.astype(y.dtype, copy=False), x)


def _group_norm(x, scale, bias, num_groups, epsilon, st, per_group):
    n, c = x.shape[0], x.shape[1]
    if c % num_groups:
        raise ValueError(f"GroupNormalization: {c} channels do not split into {num_groups} groups")
    w = _work(x).reshape(n, num_groups, -1)
    mean = w.mean(axis=2, keepdims=True)
    d = w - mean
    y = (d / np.sqrt(np.mean(d * d, axis=2, keepdims=True) + st.type(epsilon))).reshape(x.shape)
    y = _work(same_dtype(y, x))
    if per_group and scale.size == num_groups:
        scale, bias = np.repeat(scale, c // num_groups), np.repeat(bias, c // num_groups)
    y = y * _per_channel(scale.astype(y.dtype), x.ndim) + _per_channel(bias.astype(y.dtype), x.ndim)
    return same_dtype(y, x)


@register("GroupNormalization", 18)
def group_normalization_v18(x, scale, bias, *, num_groups, epsilon=1e-5):
    """ONNX GroupNormalization opset 18: scale and bias have one value per group (per channel also accepted)."""
    return _group_norm(x, scale, bias, num_groups, epsilon, np.dtype(_work(x).dtype), True)


@register("GroupNormalization", 21)
def group_normalization(x, scale, bias, *, num_groups, epsilon=1e-5, stash_type=1):
    """ONNX GroupNormalization opset 21: scale and bias have one value per channel."""
    return _group_norm(x, scale, bias, num_groups, epsilon, _stash(stash_type), False)


# -- LpNormalization / MeanVarianceNormalization / LRN ------------------------------------------------------------
@register("LpNormalization", 1)
def lp_normalization(x, *, axis=-1, p=2):
    """ONNX LpNormalization opset 1..22: x / ||x||_p along `axis` (p is 1 or 2); zero vectors stay zero."""
    w = _work(x)
    a = norm_axis(axis, x.ndim)
    if p == 1:
        norm = np.sum(np.abs(w), axis=a, keepdims=True)
    elif p == 2:
        norm = np.sqrt(np.sum(w * w, axis=a, keepdims=True))
    else:
        raise ValueError(f"LpNormalization: p must be 1 or 2, not {p}")
    safe = np.where(norm == 0, 1, norm)
    return same_dtype(np.where(norm == 0, 0, w / safe), x)  # a zero vector stays zero (as ONNX Runtime does)


@register("MeanVarianceNormalization", 9)
def mean_variance_normalization(x, *, axes=(0, 2, 3)):
    """ONNX MeanVarianceNormalization opset 9..13: (X - E[X]) / (sqrt(Var[X]) + 1e-9) over `axes`."""
    w = _work(x)
    ax = as_axes(axes, x.ndim)
    d = w - w.mean(axis=ax, keepdims=True)
    std = np.sqrt(np.mean(d * d, axis=ax, keepdims=True))
    return same_dtype(d / (std + w.dtype.type(1e-9)), x)


@register("LRN", 1)
def lrn(x, *, size, alpha=1e-4, beta=0.75, bias=1.0):
    """ONNX LRN opset 1..13: local response normalization across channels (dim 1)."""
    w = _work(x)
    c = x.shape[1]
    lo, hi = (size - 1) // 2, size // 2  # floor((size-1)/2), ceil((size-1)/2)
    pad = [(0, 0)] * x.ndim
    pad[1] = (lo, hi)
    sq = np.pad(w * w, pad)
    window = np.zeros_like(w)
    for k in range(size):  # `size` shifted channel slices (a handful), each a whole-tensor add
        window += sq[:, k : k + c]
    return same_dtype(w / (bias + (alpha / size) * window) ** beta, x)
