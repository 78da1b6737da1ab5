"""The C backend's own machinery: generated elementwise loops, broadcasting, in-place steps, the build cache,
thread-safe sessions, and the errors for what it cannot run."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge.backends.c import build
from burnedge.errors import UnsupportedOpError


def _model(nodes, inputs, outputs, inits=(), opset=17) -> burnedge.Model:
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return burnedge.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]))


def _vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def _same(model: burnedge.Model, feeds: dict[str, np.ndarray], exact: bool = False) -> dict[str, np.ndarray]:
    want = burnedge.Session(model).run(feeds)
    got = burnedge.Session(model, backend="c").run(feeds)
    for k, w in want.items():
        assert got[k].dtype == w.dtype and got[k].shape == w.shape, k
        if exact or w.dtype.kind != "f":
            np.testing.assert_array_equal(got[k], w)
        else:
            np.testing.assert_allclose(got[k], w, rtol=1e-5, atol=1e-6)
    return got


RNG = np.random.default_rng(0)


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((2, 3, 4), (2, 3, 4)),
        ((2, 3, 4), (4,)),
        ((2, 3, 4), (3, 1)),
        ((2, 1, 4), (1, 3, 1)),
        ((5,), ()),
        ((1, 8, 6, 6), (1, 8, 1, 1)),
    ],
)
def test_broadcasting_binary_ops(a_shape, b_shape):
    out = np.broadcast_shapes(a_shape, b_shape)
    nodes = [helper.make_node(op, ["a", "b"], [f"y{i}"]) for i, op in enumerate(["Add", "Sub", "Mul", "Div", "Max"])]
    m = _model(nodes, [_vi("a", a_shape), _vi("b", b_shape)], [_vi(f"y{i}", out) for i in range(5)])
    _same(
        m, {"a": RNG.standard_normal(a_shape).astype(np.float32), "b": RNG.uniform(0.5, 2, b_shape).astype(np.float32)}
    )


def test_unary_chain_runs_in_place_and_matches():
    ops = [
        "Sigmoid",
        "Tanh",
        "Erf",
        "Abs",
        "Sqrt",
        "Log",
        "Exp",
        "Neg",
        "Relu",
        "Floor",
        "Ceil",
        "Round",
        "Softplus",
        "HardSwish",
    ]
    nodes = [helper.make_node(op, [f"t{i}"], [f"t{i + 1}"]) for i, op in enumerate(ops)]
    m = _model(nodes, [_vi("t0", [3, 7])], [_vi(f"t{len(ops)}", [3, 7])])
    _same(m, {"t0": RNG.standard_normal((3, 7)).astype(np.float32)})
    # every step after the first can overwrite its input: the chain needs two 64-byte slots, not fifteen
    assert burnedge.Session(m, backend="c").arena_bytes <= 2 * 128


@pytest.mark.parametrize("op", ["Relu", "HardSigmoid", "HardSwish", "Max", "Min"])
def test_nan_passes_like_the_reference(op):
    """numpy's maximum / minimum / clip keep a NaN; the generated loops do too (fmaxf and fminf would drop it)."""
    a = RNG.standard_normal((4, 6)).astype(np.float32)
    b = RNG.standard_normal((4, 6)).astype(np.float32)
    a[0, 1] = a[2, 3] = np.nan
    b[1, 2] = b[2, 3] = np.nan
    two = op in ("Max", "Min")
    nodes = [helper.make_node(op, ["a", "b"] if two else ["a"], ["t"]), helper.make_node("Neg", ["t"], ["y"])]
    inputs = [_vi("a", [4, 6]), _vi("b", [4, 6])] if two else [_vi("a", [4, 6])]
    feeds = {"a": a, "b": b} if two else {"a": a}
    model = _model(nodes, inputs, [_vi("y", [4, 6])])
    want = burnedge.Session(model).run(feeds)["y"]
    got = burnedge.Session(model, backend="c").run(feeds)["y"]
    assert np.isnan(want).sum() == (3 if two else 2)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)  # NaN in the same places (assert_allclose checks)


def test_integer_and_boolean_ops_are_exact():
    nodes = [
        helper.make_node("Mod", ["a", "b"], ["m"]),
        helper.make_node("Div", ["a", "b"], ["d"]),
        helper.make_node("Less", ["a", "b"], ["lt"]),
        helper.make_node("Where", ["lt", "a", "b"], ["w"]),
        helper.make_node("Cast", ["w"], ["f"], to=TensorProto.FLOAT),
    ]
    m = _model(
        nodes,
        [_vi("a", [10], TensorProto.INT64), _vi("b", [10], TensorProto.INT64)],
        [
            _vi("m", [10], TensorProto.INT64),
            _vi("d", [10], TensorProto.INT64),
            _vi("lt", [10], TensorProto.BOOL),
            _vi("w", [10], TensorProto.INT64),
            _vi("f", [10]),
        ],
    )
    a = np.array([-7, -3, 0, 3, 7, 9, -9, 5, -5, 100], np.int64)
    b = np.array([2, -2, 3, 3, -4, 4, 4, -3, 3, 7], np.int64)
    _same(m, {"a": a, "b": b}, exact=True)


def test_two_threads_share_one_session():
    w = numpy_helper.from_array(RNG.standard_normal((1, 64)).astype(np.float32), "w")
    nodes = [helper.make_node("Mul", ["x", "w"], ["h"]), helper.make_node("Tanh", ["h"], ["y"])]
    m = _model(nodes, [_vi("x", [256, 64])], [_vi("y", [256, 64])], [w])
    sess = burnedge.Session(m, backend="c")
    ref = burnedge.Session(m)
    inputs = [RNG.standard_normal((256, 64)).astype(np.float32) for _ in range(2)]
    wants = [ref.run({"x": x})["y"] for x in inputs]
    errors: list[str] = []

    def worker(k: int) -> None:
        for _ in range(200):
            got = sess.run({"x": inputs[k]})["y"]
            if not np.allclose(got, wants[k], rtol=1e-5, atol=1e-6):
                errors.append(f"thread {k} got another thread's result")
                return

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_threads_option_gives_identical_results():
    nodes = [helper.make_node("Sigmoid", ["x"], ["y"])]
    m = _model(nodes, [_vi("x", [1 << 17])], [_vi("y", [1 << 17])])
    x = RNG.standard_normal(1 << 17).astype(np.float32)
    one = burnedge.Session(m, backend="c").run({"x": x})["y"]
    two = burnedge.Session(m, backend="c", threads=2).run({"x": x})["y"]
    np.testing.assert_array_equal(one, two)


def test_builds_are_cached_by_content(monkeypatch):
    m = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", [4])], [_vi("y", [4])])
    burnedge.Session(m, backend="c")
    calls: list[list[str]] = []
    real = build._run
    monkeypatch.setattr(build, "_run", lambda cmd, what: calls.append(cmd) or real(cmd, what))
    burnedge.Session(m, backend="c")
    assert calls == []


def test_missing_compiler_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("CC", "no-such-cc")
    monkeypatch.setenv("BURNEDGE_CACHE", str(tmp_path))
    m = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", [4])], [_vi("y", [4])])
    with pytest.raises(burnedge.BurnedgeError, match="no C compiler 'no-such-cc'.*apt-get install gcc"):
        burnedge.Session(m, backend="c")


def test_ops_without_kernels_are_listed():
    nodes = [helper.make_node("GlobalLpPool", ["x"], ["r"], name="lp"), helper.make_node("Relu", ["r"], ["y"])]
    m = _model(nodes, [_vi("x", [1, 1, 4, 4])], [_vi("y", [1, 1, 1, 1])])
    with pytest.raises(UnsupportedOpError, match=r"on the c backend: GlobalLpPool \(opset 17; nodes 'lp'\)"):
        burnedge.Session(m, backend="c")
