"""C backend vs onnxruntime on LSTM, GRU and RNN with sequence_lens fed at run time: ragged lengths (a full one among
them) in every direction, so each sequence stops at its length, keeps its state and writes zeros."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import burnedge

from .c_helpers import ONNX_TYPE

RNG = np.random.default_rng(61)
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_runtime_sequence_lens(op, direction):
    T, B, n_in, H, D = 5, 4, 3, 6, 2 if direction == "bidirectional" else 1
    G = GATES[op]
    feeds = {"X": RNG.standard_normal((T, B, n_in)).astype(np.float32),
             "W": RNG.standard_normal((D, G * H, n_in)).astype(np.float32) * 0.5,
             "R": RNG.standard_normal((D, G * H, H)).astype(np.float32) * 0.5,
             "B": RNG.standard_normal((D, 2 * G * H)).astype(np.float32) * 0.5,
             "lens": np.array([3, 5, 2, 1], np.int32),
             "h0": RNG.standard_normal((D, B, H)).astype(np.float32)}  # fmt: skip
    outs = ["Y", "Y_h"]
    if op == "LSTM":
        feeds["c0"] = RNG.standard_normal((D, B, H)).astype(np.float32)
        outs.append("Y_c")
    node = helper.make_node(op, list(feeds), outs, hidden_size=H, direction=direction)
    ins = [helper.make_tensor_value_info(k, ONNX_TYPE[v.dtype], v.shape) for k, v in feeds.items()]
    graph = helper.make_graph(
        [node], "g", ins, [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs]
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    want = dict(zip(outs, sess.run(outs, feeds), strict=True))
    got = burnedge.Session(burnedge.load(proto), backend="c", threads=2).run(feeds)
    for name in outs:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-5, err_msg=name)
