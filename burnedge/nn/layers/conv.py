"""Conv1d, Conv2d, ConvTranspose1d and ConvTranspose2d, with torch's arguments (padding "same"/"valid",
dilation, groups, padding_mode zeros/reflect/replicate/circular) and parameter shapes."""

from __future__ import annotations

import math
from typing import Any

from ...errors import BurnedgeError
from .. import functional_conv as C
from ..init import fan_in, uniform
from ..module import Module
from ..tensor import Parameter

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]

_PAD_MODES = {"zeros": "constant", "reflect": "reflect", "replicate": "replicate", "circular": "circular"}


def _tuple(value: Any, n: int) -> tuple:
    if isinstance(value, str):
        return value
    return (int(value),) * n if isinstance(value, int) else tuple(int(v) for v in value)


class _ConvNd(Module):
    """torch's ConvNd arguments and defaults; a subclass names its rank `n` and its functional `_conv`."""

    n = 0
    transposed = False
    _conv: Any = None

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=True,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        super().__init__()
        n, name = self.n, type(self).__name__
        if in_channels % groups or out_channels % groups:
            raise BurnedgeError(
                f"{name}: in_channels {in_channels} and out_channels {out_channels} must divide by groups {groups}"
            )
        if padding_mode not in _PAD_MODES:
            raise BurnedgeError(
                f"{name}: padding_mode {padding_mode!r} is not supported; modes: {', '.join(_PAD_MODES)}"
            )
        if isinstance(padding, str) and padding not in ("same", "valid"):
            raise BurnedgeError(f"{name}: padding {padding!r} must be 'same', 'valid', an int or a tuple")
        self.in_channels, self.out_channels, self.groups = int(in_channels), int(out_channels), int(groups)
        self.kernel_size, self.stride = _tuple(kernel_size, n), _tuple(stride, n)
        self.padding, self.dilation = _tuple(padding, n), _tuple(dilation, n)
        self.padding_mode = padding_mode
        if self.transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        bound = 1.0 / math.sqrt(fan_in(shape)) if fan_in(shape) else 0.0
        self.weight = Parameter(uniform(shape, bound))
        self.bias = Parameter(uniform((out_channels,), bound)) if bias else None

    def _padded(self, x: Any) -> tuple[Any, Any]:
        """(input, conv padding): a reflect/replicate padding_mode pads the input first, torch's way."""
        if self.padding_mode == "zeros":
            return x, self.padding
        pads = C.conv_pads(self.padding, list(self.kernel_size), list(self.dilation), list(self.stride))
        n = len(self.kernel_size)
        flat = [p for d in reversed(range(n)) for p in (pads[d], pads[n + d])]
        return C.pad(x, flat, mode=_PAD_MODES[self.padding_mode]), 0

    def forward(self, input: Any) -> Any:
        x, pad = self._padded(input)
        return type(self)._conv(x, self.weight, self.bias, self.stride, pad, self.dilation, self.groups)

    def extra_repr(self) -> str:
        return (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
            f"padding={self.padding!r}"
        )


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L): weight (C_out, C_in / groups, k)."""

    n = 1
    _conv = C.conv1d


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W): weight (C_out, C_in / groups, kh, kw)."""

    n = 2
    _conv = C.conv2d


class _ConvTransposeNd(_ConvNd):
    """torch's ConvTransposeNd arguments (their order differs from ConvNd's) and defaults."""

    transposed = True

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups=1,
        bias=True,
        dilation=1,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        if padding_mode != "zeros" or isinstance(padding, str):
            raise BurnedgeError(f"{type(self).__name__}: only padding_mode 'zeros' and int padding, as in torch")
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
        )
        self.output_padding = _tuple(output_padding, self.n)

    def forward(self, input: Any) -> Any:
        return type(self)._conv(
            input, self.weight, self.bias, self.stride, self.padding, self.output_padding, self.groups, self.dilation
        )


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution: weight (C_in, C_out / groups, k)."""

    n = 1
    _conv = C.conv_transpose1d


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution: weight (C_in, C_out / groups, kh, kw)."""

    n = 2
    _conv = C.conv_transpose2d
