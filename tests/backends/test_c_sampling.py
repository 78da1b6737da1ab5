"""C backend vs onnxruntime on the ops that sample their input at run-time positions: RoiAlign (avg and max, both
coordinate modes, a fixed and an adaptive sampling grid, regions partly outside the image) and DeformConv."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from burnedge import BurnedgeError

from .c_helpers import check_node, one_node_model, run_c

RNG = np.random.default_rng(41)


def _rois(dtype):
    return np.array([[0.5, 1.0, 6.0, 7.5], [-2.0, -1.0, 3.0, 2.5], [2.0, 2.0, 2.2, 2.1], [4.0, 0.0, 11.0, 9.0]], dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("mode", "ctm", "ratio"), [("avg", "half_pixel", 0), ("avg", "output_half_pixel", 2),
                                                    ("max", "half_pixel", 2), ("avg", "half_pixel", 3)])  # fmt: skip
def test_roi_align(mode, ctm, ratio, dtype):
    feeds = {"x": RNG.standard_normal((2, 3, 8, 9)).astype(dtype), "rois": _rois(dtype),
             "idx": np.array([0, 1, 1, 0], np.int64)}  # fmt: skip
    node = helper.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], mode=mode, output_height=3, output_width=2,
                            sampling_ratio=ratio, spatial_scale=0.9, coordinate_transformation_mode=ctm)  # fmt: skip
    check_node(node, feeds, 16, out_type=TensorProto.FLOAT if dtype == np.float32 else TensorProto.DOUBLE)


def test_roi_align_opset10_and_bad_batch_index():
    feeds = {"x": RNG.standard_normal((2, 2, 6, 6)).astype(np.float32), "rois": _rois(np.float32),
             "idx": np.array([1, 0, 1, 0], np.int64)}  # fmt: skip
    node = helper.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], output_height=2, output_width=2)
    check_node(node, feeds, 10)
    feeds["idx"] = np.array([0, 2, 0, 0], np.int64)
    with pytest.raises(BurnedgeError, match="returned error 2"):  # batch index 2 of 2 images
        run_c(one_node_model(node, feeds, TensorProto.FLOAT, 10), feeds)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("group", "og", "masked"), [(1, 1, False), (2, 2, True), (1, 2, True)])
def test_deform_conv(group, og, masked, dtype):
    n, c, m, k = 2, 4, 6, (3, 2)
    out = (4, 6)  # (7 + 2 - 3) // 2 + 1 = 4 rows of stride 2; 6 + 1 - 2 + 1 = 6 columns
    feeds = {"x": RNG.standard_normal((n, c, 7, 6)).astype(dtype),
             "w": RNG.standard_normal((m, c // group, *k)).astype(dtype),
             "offset": (RNG.standard_normal((n, og * 6 * 2, *out)) * 1.5).astype(dtype),
             "b": RNG.standard_normal(m).astype(dtype)}  # fmt: skip
    inputs = ["x", "w", "offset", "b"]
    if masked:
        feeds["mask"] = RNG.random((n, og * 6, *out)).astype(dtype)
        inputs.append("mask")
    node = helper.make_node("DeformConv", inputs, ["y"], group=group, offset_group=og, strides=[2, 1],
                            pads=[1, 0, 1, 1], dilations=[1, 1])  # fmt: skip
    check_node(node, feeds, 19, tol=1e-4 if dtype == np.float32 else 1e-10)
