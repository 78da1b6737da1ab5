"""Pooling modules: MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d (torch's arguments and defaults)."""

from __future__ import annotations

from typing import Any

from .. import functional_pool as P
from ..module import Module

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AvgPool1d", "AvgPool2d", "MaxPool1d", "MaxPool2d"]


class _MaxPool(Module):
    fn = staticmethod(P.max_pool1d)

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride, self.padding = (
            kernel_size,
            stride if stride is not None else kernel_size,
            padding,
        )
        self.dilation, self.return_indices, self.ceil_mode = dilation, return_indices, ceil_mode

    def forward(self, input: Any) -> Any:
        return self.fn(
            input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode, self.return_indices
        )


class MaxPool1d(_MaxPool):
    fn = staticmethod(P.max_pool1d)


class MaxPool2d(_MaxPool):
    fn = staticmethod(P.max_pool2d)


class AvgPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size, self.stride, self.padding = (
            kernel_size,
            stride if stride is not None else kernel_size,
            padding,
        )
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Any) -> Any:
        return P.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)


class AvgPool2d(Module):
    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None
    ):
        super().__init__()
        self.kernel_size, self.stride, self.padding = (
            kernel_size,
            stride if stride is not None else kernel_size,
            padding,
        )
        self.ceil_mode, self.count_include_pad, self.divisor_override = ceil_mode, count_include_pad, divisor_override

    def forward(self, input: Any) -> Any:
        return P.avg_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


class AdaptiveAvgPool1d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Any) -> Any:
        return P.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Any) -> Any:
        return P.adaptive_avg_pool2d(input, self.output_size)
