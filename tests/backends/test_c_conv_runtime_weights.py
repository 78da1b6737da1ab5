"""C backend vs onnxruntime on Conv and ConvTranspose whose weights (and bias) are graph inputs, not constants:
groups, depthwise, strides, dilations, padding, odd sizes and 2 threads."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from .c_helpers import check_node

RNG = np.random.default_rng(29)


def _f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize(
    "x,w,attrs",
    [((2, 6, 11, 9), (4, 3, 3, 2), {"group": 2, "strides": [2, 1], "pads": [1, 0, 2, 1]}),
     ((1, 5, 13, 7), (7, 5, 3, 3), {"dilations": [2, 1], "pads": [2, 1, 2, 1]}),
     ((1, 3, 40, 33), (8, 3, 1, 1), {}),  # 1x1: the input read in place, more than one 16-column panel
     ((2, 4, 9, 10), (8, 1, 3, 3), {"group": 4, "pads": [1, 1, 1, 1]}),  # depthwise, multiplier 2
     ((1, 3, 17), (5, 3, 4), {"strides": [3], "auto_pad": "SAME_UPPER"}),
     ((1, 16, 40, 38), (13, 16, 3, 3), {"pads": [1, 1, 1, 1]})],  # big enough to split over the 2 threads
)  # fmt: skip
@pytest.mark.parametrize("bias", [False, True])
def test_conv_run_time_weights(x, w, attrs, bias):
    feeds = {"x": _f32(*x), "w": _f32(*w)}
    if bias:
        feeds["b"] = _f32(w[0])
    check_node(helper.make_node("Conv", list(feeds), ["y"], **attrs), feeds, 11, tol=1e-4)


@pytest.mark.parametrize(
    "x,w,attrs",
    [((2, 4, 5, 7), (4, 3, 3, 2), {"group": 2, "strides": [2, 3], "pads": [1, 0, 0, 1]}),
     ((1, 3, 6, 5), (3, 2, 3, 3), {"dilations": [2, 1], "output_padding": [1, 0], "strides": [2, 2]}),
     ((1, 2, 9), (2, 5, 4), {"strides": [2]})],
)  # fmt: skip
@pytest.mark.parametrize("bias", [False, True])
def test_conv_transpose_run_time_weights(x, w, attrs, bias):
    feeds = {"x": _f32(*x), "w": _f32(*w)}
    if bias:
        feeds["b"] = _f32(w[1] * attrs.get("group", 1))
    check_node(helper.make_node("ConvTranspose", list(feeds), ["y"], **attrs), feeds, 11, tol=1e-4)
