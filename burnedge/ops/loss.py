"""Loss ops: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.

Spec: https://onnx.ai/onnx/operators/. Versions: NegativeLogLikelihoodLoss 12..22, SoftmaxCrossEntropyLoss 12..13
(reduction none/sum/mean, optional per-class weights, optional ignore_index). Inputs are [N, C] or
[N, C, d1, ..., dk] with targets [N] or [N, d1, ..., dk]; results keep the input dtype.
"""

from __future__ import annotations

import numpy as np

from . import register
from ._common import same_dtype
from .activations import _log_softmax, _work


def _nll(logp, target, weight, reduction, ignore_index):
    """Weighted negative log-likelihood of log-probabilities `logp` [N, C, ...] at class indices `target`."""
    if logp.ndim < 2:
        raise ValueError(f"input must have rank >= 2 ([N, C, ...]), not {logp.ndim}")
    if target.shape != (logp.shape[0],) + logp.shape[2:]:
        raise ValueError(f"target shape {list(target.shape)} does not fit input shape {list(logp.shape)}")
    c = logp.shape[1]
    t = target.astype(np.int64)
    valid = np.ones(t.shape, dtype=bool) if ignore_index is None else t != ignore_index
    idx = np.clip(t, 0, max(c - 1, 0))
    picked = np.take_along_axis(logp, idx[:, None], axis=1)[:, 0]
    if weight is not None:
        w = np.take(weight.astype(logp.dtype, copy=False), idx)
    else:
        w = np.ones(t.shape, dtype=logp.dtype)
    w = np.where(valid, w, 0).astype(logp.dtype)
    loss = -picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return np.sum(loss)
    if reduction == "mean":
        return np.sum(loss) / np.sum(w)
    raise ValueError(f"reduction must be 'none', 'sum' or 'mean', not {reduction!r}")


@register("NegativeLogLikelihoodLoss", 12)
def negative_log_likelihood_loss(x, target, weight=None, *, ignore_index=None, reduction="mean"):
    """ONNX NegativeLogLikelihoodLoss opset 12..22: loss[n, d] = -x[n, target[n, d], d] * weight[target[n, d]]."""
    w = _work(x)
    return same_dtype(_nll(w, target, weight, reduction, ignore_index), x)


@register("SoftmaxCrossEntropyLoss", 12)
def softmax_cross_entropy_loss(scores, labels, weights=None, *, ignore_index=None, reduction="mean"):
    """ONNX SoftmaxCrossEntropyLoss opset 12..13: NLL of log_softmax(scores, axis=1); also returns log_prob."""
    w = _work(scores)
    if w.dtype == np.float32:
        w = w.astype(np.float64)  # the log-softmax and the mean are computed in double, rounded once
    log_prob = _log_softmax(w, 1)
    loss = _nll(log_prob, labels, weights, reduction, ignore_index)
    return same_dtype(loss, scores), same_dtype(log_prob, scores)
