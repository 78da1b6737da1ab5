"""C backend vs onnxruntime on Resize tf_crop_and_resize (linear) with the roi fed at run time: every axis or
some (axes), crops inside and past the input (extrapolation), a single output row, odd sizes."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge

RNG = np.random.default_rng(47)


@pytest.mark.parametrize(
    "shape,sizes,axes,roi",
    [((1, 2, 5, 7), [1, 2, 4, 6], None, [0, 0, 0.1, 0.2, 1, 1, 0.8, 0.9]),
     ((2, 3, 6, 5), [3, 1], [3, 2], [-0.2, 0.3, 1.3, 0.6]),  # past the input on one side: extrapolated
     ((3, 9, 4), [5, 7], [1, 2], [0.25, 0.0, 0.75, 1.0])],
)  # fmt: skip
@pytest.mark.parametrize("extrapolation_value", [0.0, -3.5])
def test_crop_and_resize_with_a_run_time_roi(shape, sizes, axes, roi, extrapolation_value):
    x = RNG.standard_normal(shape).astype(np.float32)
    attrs = {"coordinate_transformation_mode": "tf_crop_and_resize", "mode": "linear",
             "extrapolation_value": extrapolation_value, **({"axes": axes} if axes else {})}  # fmt: skip
    node = helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], **attrs)
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
           helper.make_tensor_value_info("roi", TensorProto.FLOAT, [len(roi)])]  # fmt: skip
    sz = numpy_helper.from_array(np.array(sizes, np.int64), "sizes")
    graph = helper.make_graph([node], "g", ins, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [sz])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    feeds = {"x": x, "roi": np.array(roi, np.float32)}
    want = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got = burnedge.Session(burnedge.load(proto), backend="c", threads=2).run(feeds)["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
