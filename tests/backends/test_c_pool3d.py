"""C backend vs onnxruntime on 3-D MaxPool and AveragePool: strides, dilations, explicit and auto pads, ceil mode,
count_include_pad, odd sizes, 2 threads."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from .c_helpers import check_node

RNG = np.random.default_rng(11)
CASES = [
    {"kernel_shape": [2, 3, 2]},
    {"kernel_shape": [3, 3, 3], "strides": [2, 1, 2], "pads": [1, 0, 1, 1, 1, 0]},
    {"kernel_shape": [2, 2, 3], "strides": [2, 2, 2], "ceil_mode": 1},
    {"kernel_shape": [3, 2, 2], "auto_pad": "SAME_UPPER", "strides": [2, 2, 1]},
]


@pytest.mark.parametrize("attrs", CASES)
@pytest.mark.parametrize("dilated", [False, True])
def test_maxpool_3d(attrs, dilated):
    x = RNG.standard_normal((2, 3, 7, 9, 8)).astype(np.float32)
    extra = {"dilations": [2, 1, 2]} if dilated and "auto_pad" not in attrs else {}
    check_node(helper.make_node("MaxPool", ["x"], ["y"], **attrs, **extra), {"x": x}, 12)


@pytest.mark.parametrize("attrs", CASES)
@pytest.mark.parametrize("count_include_pad", [0, 1])
def test_averagepool_3d(attrs, count_include_pad):
    x = RNG.standard_normal((1, 4, 8, 7, 9)).astype(np.float32)
    node = helper.make_node("AveragePool", ["x"], ["y"], count_include_pad=count_include_pad, **attrs)
    check_node(node, {"x": x}, 19)
