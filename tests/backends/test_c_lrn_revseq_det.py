"""C backend vs onnxruntime on LRN and ReverseSequence, and vs numpy.linalg on Det: odd sizes and channel counts,
LRN windows wider than the channels, both axis orders, batches of matrices, 2 threads."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import burnedge

from .c_helpers import check_node, one_node_model, run_c

RNG = np.random.default_rng(31)


@pytest.mark.parametrize("size", [1, 3, 5, 9])  # onnxruntime takes odd sizes only
def test_lrn(size):
    x = RNG.standard_normal((2, 7, 5, 3)).astype(np.float32)
    node = helper.make_node("LRN", ["x"], ["y"], size=size, alpha=0.3, beta=0.6, bias=1.5)
    check_node(node, {"x": x}, 13, tol=1e-5)


@pytest.mark.parametrize("batch_axis,time_axis", [(1, 0), (0, 1)])
def test_reverse_sequence(batch_axis, time_axis):
    shape = [6, 4, 3] if batch_axis == 1 else [4, 6, 3]
    feeds = {"x": RNG.standard_normal(shape).astype(np.float32), "lens": np.array([6, 1, 0, 4], np.int64)}
    node = helper.make_node("ReverseSequence", ["x", "lens"], ["y"], batch_axis=batch_axis, time_axis=time_axis)
    check_node(node, feeds, 10)


def test_reverse_sequence_length_out_of_range_fails_the_run():
    feeds = {"x": np.ones((3, 2), np.float32), "lens": np.array([2, 4], np.int64)}
    proto = one_node_model(helper.make_node("ReverseSequence", ["x", "lens"], ["y"]), feeds, TensorProto.FLOAT, 10)
    with pytest.raises(burnedge.BurnedgeError, match="error 2"):
        run_c(proto, feeds)


@pytest.mark.parametrize("shape", [(5, 5), (3, 2, 7, 7), (4, 1, 1)])
def test_det(shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    x[0, ...] = 0 if len(shape) == 3 else x[0, ...]  # a singular matrix among them
    want = np.linalg.det(x.astype(np.float64)).astype(np.float32)
    check_node(helper.make_node("Det", ["x"], ["y"]), {"x": x}, 22, want=want, tol=1e-5)
