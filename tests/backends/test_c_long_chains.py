"""Long plans on the C backend: a chain of thousands of kernel steps compiles in seconds and runs right.

The generated be_model_step was one switch over every step, and C compilers take time superlinear in a function's
size (Softmax chains: 1,000 steps 0.75 s, 2,000 5.3 s, 4,000 42 s in gcc; 20,000 far over 5 minutes); the greedy
planners compared each buffer with every placed one. Now steps come in blocks of STEPS_PER_FUNCTION functions and
the planners look only at buffers whose lifetimes can overlap.
"""

from __future__ import annotations

import threading
import time
import uuid

import numpy as np
import pytest
from onnx import TensorProto, helper

import burnedge
from burnedge.backends.c.emit import STEPS_PER_FUNCTION


def softmax_chain(n: int):
    nodes = [helper.make_node("Softmax", [f"t{i}"], [f"t{i + 1}"], name=f"n{i}") for i in range(n)]
    g = helper.make_graph(
        nodes,
        f"chain_{uuid.uuid4().hex[:8]}",  # a fresh source each run: the compiler really runs
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info(f"t{n}", TensorProto.FLOAT, [1, 8])],
    )
    return burnedge.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))


def within(seconds: float, fn):
    result: dict = {}
    t = threading.Thread(target=lambda: result.update(value=fn()), daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        pytest.fail(f"still compiling after {seconds} s")
    return result["value"]


def test_a_chain_of_several_blocks_runs_like_numpy_step_by_step_too():
    model = softmax_chain(2 * STEPS_PER_FUNCTION + 7)  # three blocks, the last one short
    x = np.linspace(-3, 3, 8, dtype=np.float32).reshape(1, 8)
    want = burnedge.Session(model, backend="numpy").run({"t0": x})
    for backend in ("c", "checked<c>"):  # checked<c> runs be_model_step one step at a time
        got = burnedge.Session(model, backend=backend).run({"t0": x})
        np.testing.assert_allclose(got[model.graph.outputs[0]], want[model.graph.outputs[0]], rtol=1e-5)


def test_a_5000_step_chain_compiles_in_seconds():
    model = softmax_chain(5000)
    t0 = time.perf_counter()
    sess = within(30, lambda: burnedge.Session(model, backend="c"))
    assert time.perf_counter() - t0 < 30
    out = sess.run({"t0": np.zeros((1, 8), np.float32)})[model.graph.outputs[0]]
    np.testing.assert_allclose(out, np.full((1, 8), 1 / 8), rtol=1e-6)
