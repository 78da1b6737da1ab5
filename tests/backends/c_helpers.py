"""What the C backend tests share: a graph planned by the compiler for the C backend, and its generated source."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

import burnedge
from burnedge import compiler
from burnedge.backends.c import BACKEND, io_slots
from burnedge.backends.c.emit import Emitted, emit
from burnedge.ir import Graph
from burnedge.plan import Plan

__all__ = ["ONNX_TYPE", "check_node", "io_slots", "one_node_model", "prepare", "run_c", "slots"]

slots = io_slots


def prepare(graph: Graph, options: compiler.Options | None = None) -> tuple[Plan, Emitted]:
    """The plan the compiler makes of `graph` for the C backend, and the C it emits."""
    plan = compiler.plan(graph, BACKEND, options)
    return plan, emit(plan, graph.name)


ONNX_TYPE = {np.dtype(t): v for t, v in [
    (np.float32, TensorProto.FLOAT), (np.float64, TensorProto.DOUBLE), (np.int8, TensorProto.INT8),
    (np.int16, TensorProto.INT16), (np.int32, TensorProto.INT32), (np.int64, TensorProto.INT64),
    (np.uint8, TensorProto.UINT8), (np.uint16, TensorProto.UINT16), (np.uint32, TensorProto.UINT32),
    (np.uint64, TensorProto.UINT64), (np.bool_, TensorProto.BOOL)]}  # fmt: skip


def one_node_model(node, feeds: dict, out_type, opset: int):
    """A model of the one ONNX `node` over graph inputs typed like `feeds`, with the one output "y"."""
    ins = [helper.make_tensor_value_info(k, ONNX_TYPE[v.dtype], v.shape) for k, v in feeds.items()]
    out = helper.make_tensor_value_info("y", out_type, None)
    graph = helper.make_graph([node], "g", ins, [out])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run_c(proto, feeds: dict) -> np.ndarray:
    """Output "y" of `proto` run on the C backend with 2 threads."""
    return burnedge.Session(burnedge.load(proto), backend="c", threads=2).run(feeds)["y"]


def check_node(node, feeds: dict, opset: int, out_type=None, want=None, tol=1e-5):
    """Runs the one-node model on C (2 threads) and compares with onnxruntime (or `want`)."""
    out_type = out_type or ONNX_TYPE[next(iter(feeds.values())).dtype]
    proto = one_node_model(node, feeds, out_type, opset)
    if want is None:
        sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
        want = sess.run(["y"], feeds)[0]
    got = run_c(proto, feeds)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.abs(want).max())))
    else:
        np.testing.assert_array_equal(got, want)
