"""C backend vs onnxruntime on Col2Im and vs torch on AffineGrid, their shape inputs constant (as a user binds
them): strides, dilations, pads that crop, 1-D to 3-D images, odd sizes, align_corners, 2 threads."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from .c_helpers import run_c

RNG = np.random.default_rng(19)


def _model(op: str, x: np.ndarray, consts: dict[str, np.ndarray], opset: int, **attrs):
    inits = [numpy_helper.from_array(v, k) for k, v in consts.items()]
    node = helper.make_node(op, ["x", *consts], ["y"], **attrs)
    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)]
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    graph = helper.make_graph([node], "g", vi, out, initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _blocks(image, block, strides, dil, pads):
    n = len(image)
    return [
        (image[i] + pads[i] + pads[i + n] - dil[i] * (block[i] - 1) - 1) // strides[i] + 1 for i in range(n)
    ]  # fmt: skip


@pytest.mark.parametrize(
    "image,block,strides,dil,pads",
    [([7, 9], [2, 3], [1, 2], [1, 1], [0, 0, 0, 0]),
     ([8, 6], [3, 3], [2, 1], [2, 1], [1, 2, 0, 1]),
     ([11], [4], [3], [1], [2, 1])],  # onnxruntime 1.32 gets 3-D images wrong; the node tests have one
)  # fmt: skip
def test_col2im(image, block, strides, dil, pads):
    channels, k = 3, int(np.prod(block))
    length = int(np.prod(_blocks(image, block, strides, dil, pads)))
    x = RNG.standard_normal((2, channels * k, length)).astype(np.float32)
    consts = {"image": np.array(image, np.int64), "block": np.array(block, np.int64)}
    proto = _model("Col2Im", x, consts, 18, strides=strides, dilations=dil, pads=pads)
    want = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(["y"], {"x": x})
    np.testing.assert_allclose(run_c(proto, {"x": x}), want[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("size", [[3, 1, 5, 7], [2, 4, 3, 2, 5]])
@pytest.mark.parametrize("align_corners", [0, 1])
def test_affine_grid(size, align_corners):
    r = len(size) - 2
    theta = RNG.standard_normal((size[0], r, r + 1)).astype(np.float32)
    proto = _model("AffineGrid", theta, {"size": np.array(size, np.int64)}, 20, align_corners=align_corners)
    want = torch.nn.functional.affine_grid(torch.from_numpy(theta).double(), size, align_corners=bool(align_corners))
    np.testing.assert_allclose(run_c(proto, {"x": theta}), want.numpy(), rtol=1e-5, atol=1e-6)
