"""Traced linear, convolutions and padding, with torch.nn.functional's signatures and checks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._math import common
from ._state import current

__all__ = ["conv1d", "conv2d", "conv_pads", "conv_transpose1d", "conv_transpose2d", "batched", "linear", "pad", "tup"]

# torch's pad mode -> ONNX Pad's (circular is made of Slices and a Concat, not a Pad)
_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "circular"}


def tup(value: int | Sequence[int], n: int, what: str, least: int = 0) -> list[int]:
    """An int or a sequence of `n` ints (each at least `least`) as a list of `n` ints (torch's `_pair`)."""
    out = [value] * n if isinstance(value, (int, np.integer)) else list(value)
    if len(out) == 1:
        out *= n
    if len(out) != n or not all(isinstance(v, (int, np.integer)) and v >= least for v in out):
        raise current().error(f"{what} must be an int or {n} ints of at least {least}, got {value!r}")
    return [int(v) for v in out]


def pad(input: Any, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Any:
    """torch's F.pad: `pad` lists (left, right) pairs from the last dim backwards; constant, reflect,
    replicate or circular (wrapping around: a Concat of the tensor's far ends); a negative pad crops."""
    tr = current()
    x = tr.lift(input)
    pads = [int(p) for p in pad]
    if len(pads) % 2 or len(pads) // 2 > x.ndim:
        raise tr.error(f"pad {pads} must hold (left, right) pairs for at most {x.ndim} dims")
    if mode not in _PAD_MODES:
        raise tr.error(f"pad mode {mode!r} is not supported; modes: {', '.join(_PAD_MODES)}")
    n = len(pads) // 2
    begins, ends = [0] * x.ndim, [0] * x.ndim
    for i in range(n):
        begins[x.ndim - 1 - i], ends[x.ndim - 1 - i] = pads[2 * i], pads[2 * i + 1]
    if mode == "reflect":
        for d in range(x.ndim):
            if max(begins[d], ends[d]) >= x.shape[d]:
                raise tr.error(
                    f"reflect padding ({begins[d]}, {ends[d]}) must be smaller than the size {x.shape[d]} of dim {d}"
                )
    if not any(begins) and not any(ends):
        return x
    if mode == "circular":
        return _circular(tr, x, begins, ends)
    fill = None if mode != "constant" else tr.lift(0 if value is None else value, x.dtype)
    return tr.op("Pad", x, tr.ints(begins + ends), fill, mode=_PAD_MODES[mode])


def _circular(tr, x: Any, begins: list[int], ends: list[int]) -> Any:
    for d, (b, e) in enumerate(zip(begins, ends)):
        n = x.shape[d]
        if max(b, e) > n:
            raise tr.error(f"circular padding ({b}, {e}) must be at most the size {n} of dim {d}")
        if b < 0 or e < 0:
            raise tr.error("circular padding does not crop: pads must not be negative")
        parts = [x]
        if b:
            parts.insert(0, tr.op("Slice", x, tr.ints([n - b]), tr.ints([n]), tr.ints([d])))
        if e:
            parts.append(tr.op("Slice", x, tr.ints([0]), tr.ints([e]), tr.ints([d])))
        if len(parts) > 1:
            x = tr.op("Concat", *parts, axis=d)
    return x


def linear(input: Any, weight: Any, bias: Any = None) -> Any:
    """x @ weight.T + bias: a Gemm (transB, so the weight stays the initializer of its own name), between two
    Reshapes when the input has more than two dims."""
    tr = current()
    x, w = common(input, weight)
    if w.ndim != 2:
        raise tr.error(f"linear weight must be 2-D (out_features, in_features), got {list(w.shape)}")
    if x.ndim == 0 or x.shape[-1] != w.shape[1]:
        raise tr.error(f"expected input with {w.shape[1]} features in its last dim, got shape {list(x.shape)}")
    b = None if bias is None else tr.lift(bias, x.dtype)
    if x.ndim == 2:
        return tr.op("Gemm", x, w, b, transB=1)
    lead = list(x.shape[:-1])
    flat = tr.op("Reshape", x, tr.ints([-1, w.shape[1]]))
    return tr.op("Reshape", tr.op("Gemm", flat, w, b, transB=1), tr.ints([*lead, w.shape[0]]))


def conv_pads(padding: Any, kernel: list[int], dilation: list[int], stride: list[int]) -> list[int]:
    """ONNX pads (all begins, then all ends) for torch's conv `padding`: ints, "valid", or "same" (the odd one
    of an even total on the end side, as torch pads)."""
    tr, n = current(), len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return [0] * (2 * n)
        if padding != "same":
            raise tr.error(f"padding {padding!r} is not supported; use an int, a tuple, 'same' or 'valid'")
        if any(s != 1 for s in stride):
            raise tr.error("padding='same' needs stride 1 (as in torch)")
        total = [d * (k - 1) for d, k in zip(dilation, kernel)]
        return [t // 2 for t in total] + [t - t // 2 for t in total]
    p = tup(padding, n, "padding")
    return p + p


def batched(tr, x, n: int, what: str):
    """(x with a batch dim, whether one was added): torch takes unbatched (C, *spatial) input too."""
    if x.ndim == n + 1:
        return tr.op("Unsqueeze", x, tr.ints([0])), True
    if x.ndim != n + 2:
        raise tr.error(f"{what} expects a {n + 2}-D (batched) or {n + 1}-D input, got shape {list(x.shape)}")
    return x, False


def _conv(input, weight, bias, stride, padding, dilation, groups, n: int, what: str) -> Any:
    tr = current()
    x, w = common(input, weight)
    if w.ndim != n + 2:
        raise tr.error(f"{what} weight must be {n + 2}-D, got {list(w.shape)}")
    x, added = batched(tr, x, n, what)
    if x.shape[1] != w.shape[1] * groups:
        raise tr.error(f"expected input with {w.shape[1] * groups} channels, got {x.shape[1]}")
    if w.shape[0] % groups:
        raise tr.error(f"{w.shape[0]} output channels do not divide into {groups} groups")
    k, st, dil = list(w.shape[2:]), tup(stride, n, "stride", 1), tup(dilation, n, "dilation", 1)
    pads = conv_pads(padding, k, dil, st)
    b = None if bias is None else tr.lift(bias, x.dtype)
    y = tr.op("Conv", x, w, b, kernel_shape=k, strides=st, dilations=dil, pads=pads, group=int(groups))
    return tr.op("Squeeze", y, tr.ints([0])) if added else y


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Any:
    """torch's F.conv1d: (N, C, L) input, (C_out, C / groups, k) weight; padding an int, 'same' or 'valid'."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Any:
    """torch's F.conv2d: (N, C, H, W) input, (C_out, C / groups, kh, kw) weight."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, n: int, what: str) -> Any:
    tr = current()
    x, w = common(input, weight)
    if w.ndim != n + 2:
        raise tr.error(f"{what} weight must be {n + 2}-D (C_in, C_out / groups, *k), got {list(w.shape)}")
    x, added = batched(tr, x, n, what)
    if x.shape[1] != w.shape[0]:
        raise tr.error(f"expected input with {w.shape[0]} channels, got {x.shape[1]}")
    k, st, dil = list(w.shape[2:]), tup(stride, n, "stride", 1), tup(dilation, n, "dilation", 1)
    p, op = tup(padding, n, "padding"), tup(output_padding, n, "output_padding")
    if any(o >= max(s, d) for o, s, d in zip(op, st, dil)):
        raise tr.error(f"output_padding {op} must be smaller than the stride {st} or the dilation {dil}")
    b = None if bias is None else tr.lift(bias, x.dtype)
    y = tr.op(
        "ConvTranspose",
        x,
        w,
        b,
        kernel_shape=k,
        strides=st,
        dilations=dil,
        pads=p + p,
        output_padding=op,
        group=int(groups),
    )
    return tr.op("Squeeze", y, tr.ints([0])) if added else y


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """torch's F.conv_transpose1d: (C_in, C_out / groups, k) weight."""
    return _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, 1, "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """torch's F.conv_transpose2d: (C_in, C_out / groups, kh, kw) weight."""
    return _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, 2, "conv_transpose2d")
