"""Elementwise ops, activations and casts in torch (the registry's elementwise.py, activations.py, cast.py)."""

from __future__ import annotations

import functools
import math

import torch
import torch.nn.functional as F

from .registry import Call, op

_UNARY = {
    "Abs": torch.abs,
    "Acos": torch.acos,
    "Acosh": torch.acosh,
    "Asin": torch.asin,
    "Asinh": torch.asinh,
    "Atan": torch.atan,
    "Atanh": torch.atanh,
    "Ceil": torch.ceil,
    "Cos": torch.cos,
    "Cosh": torch.cosh,
    "Erf": torch.erf,
    "Exp": torch.exp,
    "Floor": torch.floor,
    "Log": torch.log,
    "Neg": torch.neg,
    "Reciprocal": torch.reciprocal,
    "Relu": torch.relu,
    "Round": torch.round,  # half to even, as ONNX
    "Sigmoid": torch.sigmoid,
    "Sign": torch.sign,
    "Sin": torch.sin,
    "Sinh": torch.sinh,
    "Softsign": F.softsign,
    "Sqrt": torch.sqrt,
    "Tan": torch.tan,
    "Tanh": torch.tanh,
    "Not": torch.logical_not,
    "IsNaN": torch.isnan,
    "BitwiseNot": torch.bitwise_not,
    "Identity": lambda x: x,
    "HardSwish": F.hardswish,
    "Mish": F.mish,
    "Softplus": F.softplus,
}

_BINARY = {
    "Add": torch.add,
    "Sub": torch.sub,
    "Mul": torch.mul,
    "Equal": torch.eq,
    "Greater": torch.gt,
    "GreaterOrEqual": torch.ge,
    "Less": torch.lt,
    "LessOrEqual": torch.le,
    "And": torch.logical_and,
    "Or": torch.logical_or,
    "Xor": torch.logical_xor,
    "BitwiseAnd": torch.bitwise_and,
    "BitwiseOr": torch.bitwise_or,
    "BitwiseXor": torch.bitwise_xor,
}


def _unary(name: str, fn) -> None:
    op(name)(lambda c, x: fn(x))


def _binary(name: str, fn) -> None:
    op(name)(lambda c, a, b: fn(a, b))


for _name, _fn in _UNARY.items():
    _unary(_name, _fn)
for _name, _fn in _BINARY.items():
    _binary(_name, _fn)


@op("Div")
def div(c: Call, a, b):
    if a.dtype.is_floating_point:
        return a / b
    return torch.div(a, b, rounding_mode="trunc")


@op("Pow")
def pow_(c: Call, x, y):
    return torch.pow(x, y.to(x.dtype))  # the result has the base's type


@op("Mod")
def mod(c: Call, a, b):
    if c.attr("fmod", 0) or a.dtype.is_floating_point:
        return torch.fmod(a, b)
    return torch.remainder(a, b)


@op("BitShift")
def bit_shift(c: Call, x, y):
    return x << y if c.attr("direction") == "LEFT" else x >> y


@op("IsInf")
def is_inf(c: Call, x):
    pos, neg = c.attr("detect_positive", 1), c.attr("detect_negative", 1)
    return (torch.isposinf(x) & bool(pos)) | (torch.isneginf(x) & bool(neg))


@op("Where")
def where(c: Call, cond, a, b):
    return torch.where(cond, a, b)


@op("Max", "Min", "Sum", "Mean")
def variadic(c: Call, *xs):
    fn = {"Max": torch.maximum, "Min": torch.minimum, "Sum": torch.add, "Mean": torch.add}[c.node.op_type]
    out = functools.reduce(lambda a, b: fn(*torch.broadcast_tensors(a, b)), xs)
    return out / len(xs) if c.node.op_type == "Mean" else out


# -- activations ---------------------------------------------------------------------------------------------------
@op("LeakyRelu")
def leaky_relu(c: Call, x):
    return F.leaky_relu(x, c.attr("alpha", 0.01))


@op("Elu")
def elu(c: Call, x):
    return F.elu(x, c.attr("alpha", 1.0))


@op("Celu")
def celu(c: Call, x):
    return F.celu(x, c.attr("alpha", 1.0))


@op("Selu")
def selu(c: Call, x):
    alpha, gamma = c.attr("alpha", 1.67326319217681884765625), c.attr("gamma", 1.05070102214813232421875)
    return gamma * torch.where(x > 0, x, alpha * (torch.exp(x) - 1))


@op("ThresholdedRelu")
def thresholded_relu(c: Call, x):
    return torch.where(x > c.attr("alpha", 1.0), x, torch.zeros_like(x))


@op("HardSigmoid")
def hard_sigmoid(c: Call, x):
    return torch.clamp(c.attr("alpha", 0.2) * x + c.attr("beta", 0.5), 0, 1)


@op("Gelu")
def gelu(c: Call, x):
    return F.gelu(x, approximate=c.attr("approximate", "none"))


@op("Swish")
def swish(c: Call, x):
    return x * torch.sigmoid(c.attr("alpha", 1.0) * x)


@op("PRelu")
def prelu(c: Call, x, slope):
    return torch.where(x >= 0, x, x * slope)


@op("Shrink")
def shrink(c: Call, x):
    lambd, bias = c.attr("lambd", 0.5), c.attr("bias", 0.0)
    zero = torch.zeros_like(x)
    return torch.where(x < -lambd, x + bias, torch.where(x > lambd, x - bias, zero))


@op("Clip")
def clip(c: Call, x, lo=None, hi=None):
    if c.since < 11:
        lo_v, hi_v = c.attr("min", None), c.attr("max", None)
        return torch.clamp(x, lo_v, hi_v)
    if lo is not None:
        x = torch.maximum(x, lo.to(x.dtype))
    if hi is not None:
        x = torch.minimum(x, hi.to(x.dtype))
    return x


def _softmax_family(c: Call, x, fn):
    axis = c.attr("axis", 1 if c.since < 13 else -1)
    if c.since >= 13:
        return fn(x, axis)
    axis = axis % x.dim() if x.dim() else 0
    flat = x.reshape(math.prod(x.shape[:axis]), -1)  # opsets before 13: the axes from `axis` on are one
    return fn(flat, 1).reshape(x.shape)


@op("Softmax")
def softmax(c: Call, x):
    return _softmax_family(c, x, lambda t, a: torch.softmax(t, a))


@op("LogSoftmax")
def log_softmax(c: Call, x):
    return _softmax_family(c, x, lambda t, a: torch.log_softmax(t, a))


@op("Hardmax")
def hardmax(c: Call, x):
    def fn(t, a):
        return F.one_hot(torch.argmax(t, a), t.shape[a]).movedim(-1, a).to(t.dtype)

    return _softmax_family(c, x, fn)


# -- casts -----------------------------------------------------------------------------------------------------------
@op("Cast", "CastLike")
def cast(c: Call, x, *_like):
    want = c.dtype(0)
    if want != torch.bool and x.dtype.is_floating_point and not want.is_floating_point:
        x = torch.trunc(x)  # float -> int truncates toward zero, as numpy and ONNX
    return x.to(want)
