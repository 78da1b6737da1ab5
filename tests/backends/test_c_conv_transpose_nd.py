"""C backend vs torch (in double) on the ConvTranspose cases the 2-D kernel leaves to conv_transpose_nd.py: 3-D
(groups, strides, dilations, pads, output_padding, bias), float64, constant and run-time weights, 2 threads."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from .c_helpers import ONNX_TYPE, one_node_model, run_c

RNG = np.random.default_rng(53)

CASES = [  # x shape, w shape, group, strides, pads (per axis, both sides), dilations, output_padding
    ((1, 2, 3, 4, 3), (2, 3, 2, 2, 2), 1, [1, 1, 1], [0, 0, 0], [1, 1, 1], [0, 0, 0]),
    ((2, 4, 3, 2, 3), (4, 1, 3, 2, 2), 2, [2, 1, 2], [1, 0, 1], [1, 1, 1], [0, 0, 0]),
    ((1, 2, 2, 3, 2), (2, 2, 2, 3, 2), 1, [2, 2, 1], [0, 1, 0], [2, 1, 2], [1, 1, 0]),
]


def _want(x, w, b, group, strides, pads, dil, opad):
    fn = {3: torch.nn.functional.conv_transpose1d, 4: torch.nn.functional.conv_transpose2d}.get(
        x.ndim, torch.nn.functional.conv_transpose3d
    )
    t = [torch.from_numpy(v.astype(np.float64)) if v is not None else None for v in (x, w, b)]
    y = fn(*t, stride=strides, padding=pads, output_padding=opad, groups=group, dilation=dil)
    return y.numpy().astype(x.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("xs", "ws", "group", "strides", "pads", "dil", "opad"), CASES)
def test_conv_transpose_3d_runtime_weights(xs, ws, group, strides, pads, dil, opad, dtype):
    feeds = {"x": RNG.standard_normal(xs).astype(dtype), "w": RNG.standard_normal(ws).astype(dtype),
             "b": RNG.standard_normal(ws[1] * group).astype(dtype)}  # fmt: skip
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], group=group, strides=strides, pads=pads * 2,
                            dilations=dil, output_padding=opad)  # fmt: skip
    got = run_c(one_node_model(node, feeds, ONNX_TYPE[np.dtype(dtype)], 11), feeds)
    want = _want(feeds["x"], feeds["w"], feeds["b"], group, strides, pads, dil, opad)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)


def test_conv_transpose_float64_2d_constant_weights():
    x, w = RNG.standard_normal((1, 3, 5, 4)), RNG.standard_normal((3, 2, 3, 3))
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], pads=[1, 0, 1, 0])
    vi = [helper.make_tensor_value_info("x", TensorProto.DOUBLE, x.shape)]
    out = [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)]
    graph = helper.make_graph([node], "g", vi, out, initializer=[numpy_helper.from_array(w, "w")])
    got = run_c(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]), {"x": x})
    want = _want(x, w, None, 1, [2, 2], [1, 0], [1, 1], [0, 0])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
