"""burnedge's own fused ops (domain "burnedge"), made by the passes, never found in an ONNX file.

- FusedConv / FusedGemm / FusedMatMul: the ONNX op, then the epilogue ``y = act(y + R)``; the bias is the op's own
  bias input (MatMul gains one). R (the residual) is optional and has the output's shape.
  FusedMatMul may also carry ``perm_a`` / ``perm_b`` (its operands are read through that Transpose) and
  ``perm_y`` (the result is stored transposed; never with R): the OpenCL pipeline's fold_transpose makes them.
- Elementwise: a chain of elementwise ONNX ops, kept as a subgraph ``body`` whose inputs are the node's inputs
  and whose single output is the node's output; one loop in generated code.

Activations of the epilogue (``activation``, ``activation_params``):

    ""            identity
    Relu          max(y, 0)
    Clip          min(max(y, p0), p1)              (Relu6: p = [0, 6])
    LeakyRelu     y if y >= 0 else p0 * y
    HardSigmoid   max(0, min(1, p0 * y + p1))
    HardSwish     y * max(0, min(1, y / 6 + 1/2))
    Sigmoid       1 / (1 + exp(-y))
    Tanh          tanh(y)
    Gelu          y / 2 * (1 + erf(y / sqrt(2)))
"""

from __future__ import annotations

import math

import numpy as np

from . import Spec, register
from ._common import erf
from .conv import _infer as conv_infer
from .conv import conv
from .matmul import _gemm_infer, _matmul_infer, gemm, matmul

__all__ = ["ACTIVATIONS", "activate"]


def _gelu(y: np.ndarray, p: list[float]) -> np.ndarray:
    return y * 0.5 * (1 + erf(y / math.sqrt(2)))


ACTIVATIONS = {
    "": lambda y, p: y,
    "Relu": lambda y, p: np.maximum(y, 0),
    "Clip": lambda y, p: np.minimum(np.maximum(y, p[0]), p[1]),
    "LeakyRelu": lambda y, p: np.where(y >= 0, y, y * p[0]),
    "HardSigmoid": lambda y, p: np.clip(y * p[0] + p[1], 0, 1),
    "HardSwish": lambda y, p: y * np.clip(y / 6 + 0.5, 0, 1),
    "Sigmoid": lambda y, p: 1 / (1 + np.exp(-y)),
    "Tanh": lambda y, p: np.tanh(y),
    "Gelu": _gelu,
}


def activate(y: np.ndarray, r: np.ndarray | None, activation: str, params: list[float]) -> np.ndarray:
    """The epilogue: add the residual, apply the activation; computed in float32 like the kernels."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown epilogue activation {activation!r}; known: {sorted(ACTIVATIONS)}")
    if r is not None:
        y = y + r
    return np.asarray(ACTIVATIONS[activation](y, list(params))).astype(y.dtype, copy=False)


def _fused_conv_infer(x, w, b=None, r=None, *, activation="", activation_params=(), **attrs):
    return conv_infer(x, w, b, **attrs)


@register("FusedConv", domain="burnedge", infer=_fused_conv_infer)
def fused_conv(
    x,
    w,
    b=None,
    r=None,
    *,
    auto_pad="NOTSET",
    dilations=None,
    group=1,
    kernel_shape=None,
    pads=None,
    strides=None,
    activation="",
    activation_params=(),
):
    y = conv(
        x,
        w,
        b,
        auto_pad=auto_pad,
        dilations=dilations,
        group=group,
        kernel_shape=kernel_shape,
        pads=pads,
        strides=strides,
    )
    return activate(y, r, activation, activation_params)


def _fused_gemm_infer(a, b, c=None, r=None, *, activation="", activation_params=(), **attrs):
    return _gemm_infer(a, b, c, **attrs)


@register("FusedGemm", domain="burnedge", infer=_fused_gemm_infer)
def fused_gemm(a, b, c=None, r=None, *, alpha=1.0, beta=1.0, transA=0, transB=0, activation="", activation_params=()):
    y = gemm(a, b, c, alpha=alpha, beta=beta, transA=transA, transB=transB)
    return activate(y, r, activation, activation_params)


class _Permuted:
    """A shape/dtype stand-in for an operand seen through a Transpose (what shape inference reads)."""

    def __init__(self, v, perm):
        self.shape, self.dtype = tuple(v.shape[p] for p in perm), v.dtype


def _fused_matmul_infer(
    a, b, bias=None, r=None, *, activation="", activation_params=(), perm_a=None, perm_b=None, perm_y=None
):
    spec = _matmul_infer(_Permuted(a, perm_a) if perm_a else a, _Permuted(b, perm_b) if perm_b else b)[0]
    if perm_y:
        spec = Spec(tuple(spec.shape[p] for p in perm_y), spec.dtype)
    return [spec]


@register("FusedMatMul", domain="burnedge", infer=_fused_matmul_infer)
def fused_matmul(
    a, b, bias=None, r=None, *, activation="", activation_params=(), perm_a=None, perm_b=None, perm_y=None
):
    y = matmul(np.transpose(a, perm_a) if perm_a else a, np.transpose(b, perm_b) if perm_b else b)
    if bias is not None:
        y = y + bias
    y = activate(y, r, activation, activation_params)
    return np.ascontiguousarray(np.transpose(y, perm_y)) if perm_y else y


@register("Elementwise", domain="burnedge", tags=("elementwise", "int8_lut"))
def elementwise(*xs, body, _run):
    return _run(body, *xs)[0].copy()
