"""Optimizer steps (domain ai.onnx.preview.training, opset 1): Adagrad, Momentum and Adam.

Spec: https://onnx.ai/onnx/operators/ (ai.onnx.preview.training). Each takes the learning rate R and the step
count T (scalars), then n tensors X, n gradients G and n states of each kind, and returns the n updated tensors
followed by the n updated states of each kind. Every tensor is updated on its own by the same rule.
"""

from __future__ import annotations

import numpy as np

from . import register

__all__: list[str] = []

TRAINING = "ai.onnx.preview.training"


def _groups(inputs: tuple, kinds: int, op: str) -> list[tuple]:
    """The variadic inputs (X..., G..., S1..., ...) as one tuple (x, g, s1, ...) per optimized tensor."""
    if len(inputs) % kinds:
        raise ValueError(f"{op} needs {kinds} inputs per optimized tensor after R and T, got {len(inputs)}")
    n = len(inputs) // kinds
    return [tuple(inputs[k * n + i] for k in range(kinds)) for i in range(n)]


def _outputs(results: list[tuple]) -> tuple:
    """One tuple per tensor -> (all first entries, all second entries, ...), as the ops order their outputs."""
    return tuple(r[k] for k in range(len(results[0])) for r in results)


def _scalar(v) -> float:
    return float(np.asarray(v).reshape(-1)[0])


@register("Adagrad", since=1, domain=TRAINING)
def adagrad(r, t, *tensors, decay_factor=0.0, epsilon=1e-6, norm_coefficient=0.0):
    """Adagrad: g = norm_coefficient * X + G; H' = H + g^2; X' = X - R / (1 + T * decay_factor) * g /
    (sqrt(H') + epsilon). Outputs X'..., H'...."""
    rate = _scalar(r) / (1 + _scalar(t) * decay_factor)
    results = []
    for x, g, h in _groups(tensors, 3, "Adagrad"):
        g_reg = norm_coefficient * x + g
        h_new = h + g_reg * g_reg
        x_new = x - rate * g_reg / (np.sqrt(h_new) + epsilon)
        results.append((x_new.astype(x.dtype), h_new.astype(h.dtype)))
    return _outputs(results)


@register("Momentum", since=1, domain=TRAINING)
def momentum(r, t, *tensors, alpha, beta, mode, norm_coefficient):
    """Momentum: g = norm_coefficient * X + G; V' = alpha * V + beta' * g (beta' = 1 on the first step, T = 0);
    X' = X - R * V' ("standard") or X - R * (g + alpha * V') ("nesterov"). Outputs X'..., V'...."""
    if mode not in ("standard", "nesterov"):
        raise ValueError(f"Momentum mode must be 'standard' or 'nesterov', not {mode!r}")
    rate = _scalar(r)
    b = beta if _scalar(t) > 0 else 1.0
    results = []
    for x, g, v in _groups(tensors, 3, "Momentum"):
        g_reg = norm_coefficient * x + g
        v_new = alpha * v + b * g_reg
        step = v_new if mode == "standard" else g_reg + alpha * v_new
        results.append(((x - rate * step).astype(x.dtype), v_new.astype(v.dtype)))
    return _outputs(results)


@register("Adam", since=1, domain=TRAINING)
def adam(r, t, *tensors, alpha=0.9, beta=0.999, epsilon=1e-6, norm_coefficient=0.0, norm_coefficient_post=0.0):
    """Adam: g = norm_coefficient * X + G; V' = alpha * V + (1 - alpha) * g; H' = beta * H + (1 - beta) * g^2;
    R' = R * sqrt(1 - beta^T) / (1 - alpha^T) when T > 0 (else R); X' = (1 - norm_coefficient_post) *
    (X - R' * V' / (sqrt(H') + epsilon)). Outputs X'..., V'..., H'...."""
    rate, step = _scalar(r), _scalar(t)
    if step > 0:
        rate = rate * np.sqrt(1 - beta**step) / (1 - alpha**step)
    results = []
    for x, g, v, h in _groups(tensors, 4, "Adam"):
        g_reg = norm_coefficient * x + g
        v_new = alpha * v + (1 - alpha) * g_reg
        h_new = beta * h + (1 - beta) * (g_reg * g_reg)
        x_new = (1 - norm_coefficient_post) * (x - rate * (v_new / (np.sqrt(h_new) + epsilon)))
        results.append((x_new.astype(x.dtype), v_new.astype(v.dtype), h_new.astype(h.dtype)))
    return _outputs(results)
