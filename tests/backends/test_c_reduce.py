"""C backend vs the numpy reference: pools, reductions, ArgMax/ArgMin, TopK, CumSum, Softmax and normalisations."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge.backends.c.lower import reduce as lower_reduce

RNG = np.random.default_rng(7)
ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE, np.int32: TensorProto.INT32,
             np.int64: TensorProto.INT64, np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8,
             np.int16: TensorProto.INT16, np.uint16: TensorProto.UINT16, np.uint32: TensorProto.UINT32,
             np.uint64: TensorProto.UINT64}  # fmt: skip


def _run(node_or_nodes, feeds: dict, outputs=("y",), opset=17, inits=(), threads=1, out_types=None):
    """Builds a one-graph model, runs it on numpy and C, and checks the C outputs against the reference."""
    nodes = node_or_nodes if isinstance(node_or_nodes, list) else [node_or_nodes]
    ins = [helper.make_tensor_value_info(k, ONNX_TYPE[v.dtype.type], v.shape) for k, v in feeds.items()]
    out_types = out_types or [ONNX_TYPE[next(iter(feeds.values())).dtype.type]] * len(outputs)
    outs = [helper.make_tensor_value_info(o, t, None) for o, t in zip(outputs, out_types)]
    inits = [numpy_helper.from_array(np.asarray(a), n) for n, a in inits]
    g = helper.make_graph(nodes, "g", ins, outs, inits)
    model = burnedge.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]))
    want = burnedge.Session(model).run(feeds)
    got = burnedge.Session(model, backend="c", threads=threads).run(feeds)
    for k, w in want.items():
        assert got[k].dtype == w.dtype and got[k].shape == w.shape, (k, got[k].shape, w.shape)
        if w.dtype.kind == "f":  # NaN and inf where the reference has them, then relative to max |finite ref|
            finite = np.isfinite(w)
            np.testing.assert_array_equal(got[k][~finite], w[~finite])
            g, w = got[k][finite].astype(np.float64), w[finite]
            scale = max(float(np.abs(w).max()) if w.size else 0.0, 1e-30)
            err = float(np.abs(g - w).max()) if w.size else 0.0
            assert err <= 1e-5 * scale, f"{k}: max abs error {err} vs max |ref| {scale}"
        else:
            np.testing.assert_array_equal(got[k], w)
    return got


def _x(*shape, dtype=np.float32, lo=None, hi=None):
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(lo if lo is not None else -5, hi if hi is not None else 6, shape).astype(dtype)
    if lo is not None:
        return RNG.uniform(lo, hi, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


@pytest.fixture(params=[False, True], ids=["simd", "portable"])
def portable(request, monkeypatch):
    monkeypatch.setattr(lower_reduce, "PORTABLE", request.param)
    return request.param


# -- pools --------------------------------------------------------------------------------------------------------
POOL_CASES = [
    ((2, 3, 9, 11), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ((1, 4, 8, 8), dict(kernel_shape=[2, 2], strides=[2, 2])),
    ((1, 2, 40, 37), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ((1, 2, 7, 9), dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])),
    ((1, 2, 10, 12), dict(kernel_shape=[3, 2], strides=[1, 3], pads=[0, 1, 2, 0])),
    ((1, 2, 11, 13), dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)),
    ((1, 2, 12, 12), dict(kernel_shape=[2, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)),
    ((1, 2, 9, 10), dict(kernel_shape=[3, 3], strides=[2, 1], auto_pad="SAME_UPPER")),
    ((1, 2, 9, 10), dict(kernel_shape=[2, 2], strides=[2, 2], auto_pad="SAME_LOWER")),
    ((1, 2, 9, 10), dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="VALID")),
    ((1, 2, 12, 12), dict(kernel_shape=[1, 1], strides=[4, 4], auto_pad="SAME_UPPER")),
    ((2, 3, 17), dict(kernel_shape=[3], strides=[2], pads=[1, 1])),
    ((1, 2, 16), dict(kernel_shape=[4], strides=[3], ceil_mode=1)),
    ((1, 3, 25, 5), dict(kernel_shape=[25, 5], strides=[25, 5])),
    ((1, 1, 2, 9000), dict(kernel_shape=[2, 3], strides=[1, 2], pads=[0, 1, 1, 1])),
    ((1, 2, 3, 3), dict(kernel_shape=[2, 2], pads=[2, 2, 2, 2])),  # corner windows see only padding
    ((1, 2, 3, 1), dict(kernel_shape=[1, 1], strides=[1, 5], pads=[0, 6, 0, 0])),  # no window reaches the input
]


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_pools(op, portable):
    feeds = {f"x{i}": _x(*shape) for i, (shape, _) in enumerate(POOL_CASES)}
    nodes = [helper.make_node(op, [f"x{i}"], [f"y{i}"], **attrs) for i, (_, attrs) in enumerate(POOL_CASES)]
    _run(nodes, feeds, [f"y{i}" for i in range(len(nodes))])


def test_average_pool_counting_pads():
    cases = [(i, a) for i, (_, a) in enumerate(POOL_CASES) if "pads" in a or a.get("ceil_mode")]
    feeds = {f"x{i}": _x(*POOL_CASES[i][0]) for i, _ in cases}
    nodes = [helper.make_node("AveragePool", [f"x{i}"], [f"y{i}"], count_include_pad=1, **a) for i, a in cases]
    _run(nodes, feeds, [f"y{i}" for i, _ in cases])


def test_pools_with_dilations():
    x = _x(2, 3, 13, 14)
    _run(helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 2], dilations=[2, 3], strides=[1, 2]), {"x": x})
    node = helper.make_node(
        "AveragePool", ["x"], ["y"], kernel_shape=[3, 3], dilations=[2, 2], pads=[2, 1, 1, 2], count_include_pad=1
    )
    _run(node, {"x": x}, opset=19)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_max_pool_integers(dtype):
    x = _x(2, 3, 9, 10, dtype=dtype, lo=0 if dtype == np.uint8 else -128, hi=255 if dtype == np.uint8 else 127)
    _run(helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), {"x": x})
    _run(helper.make_node("GlobalMaxPool", ["x"], ["y"]), {"x": x})


def test_max_pool_indices_match_the_reference():
    """MaxPool's second output (flat indices of each maximum) on C, as the reference gives them."""
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2])
    _run(node, {"x": _x(2, 3, 5, 4)}, outputs=("y", "i"), out_types=[TensorProto.FLOAT, TensorProto.INT64])


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pools(op, portable):
    shapes = [(2, 5, 7, 7), (1, 3, 10), (1, 64, 1, 1), (2, 4, 3, 4, 5), (1, 8, 19, 23)]
    nodes = [helper.make_node(op, [f"x{i}"], [f"y{i}"]) for i in range(len(shapes))]
    _run(nodes, {f"x{i}": _x(*s) for i, s in enumerate(shapes)}, [f"y{i}" for i in range(len(shapes))])


# -- Reduce* ------------------------------------------------------------------------------------------------------
REDUCE_OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
              "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"]  # fmt: skip
AXES = [None, [1], [-1], [0, 2], [1, 3], [0, 1, 2, 3], [2, 3]]


def _reduce_node(op, axes, opset, x, y, **attrs):
    """A Reduce node; axes as an input (an initializer named after the output) where the opset wants one."""
    if axes is not None and (opset >= 18 or (op == "ReduceSum" and opset >= 13)):
        return helper.make_node(op, [x, f"{y}_axes"], [y], **attrs), [(f"{y}_axes", np.array(axes, np.int64))]
    if axes is not None:
        attrs["axes"] = axes
    return helper.make_node(op, [x], [y], **attrs), []


def _reduce_graph(cases, opset, **attrs):
    """(nodes, initializers, outputs) for (op, axes) cases over inputs x (any sign) and p (positive)."""
    nodes, inits, outs = [], [], []
    for i, (op, axes) in enumerate(cases):
        x = "p" if op in ("ReduceLogSum", "ReduceProd") else "x"
        node, more = _reduce_node(op, axes, opset, x, f"{op}_{i}", **attrs)
        nodes.append(node)
        inits += more
        outs.append(f"{op}_{i}")
    return nodes, inits, outs


@pytest.mark.parametrize("opset, keep", [(13, 1), (18, 0)])
def test_reduce(opset, keep, portable):
    x, p = _x(2, 3, 4, 37), _x(2, 3, 4, 37, lo=0.5, hi=1.5)
    nodes, inits, outs = _reduce_graph([(op, a) for op in REDUCE_OPS for a in AXES], opset, keepdims=keep)
    _run(nodes, {"x": x, "p": p}, outs, opset=opset, inits=inits)


@pytest.mark.parametrize("shape, axes", [((3, 1, 5), [1]), ((1000,), [0]), ((4, 300), [0]), ((2, 1, 3), [0, 1])])
def test_reduce_edge_shapes(shape, axes):
    nodes, inits, outs = _reduce_graph([(op, axes) for op in REDUCE_OPS], 18)
    _run(nodes, {"x": _x(*shape), "p": _x(*shape, lo=0.5, hi=1.5)}, outs, opset=18, inits=inits)


def test_reduce_without_axes_is_elementwise():
    nodes, inits, outs = _reduce_graph([(op, None) for op in REDUCE_OPS], 18, noop_with_empty_axes=1)
    _run(nodes, {"x": _x(2, 3), "p": _x(2, 3, lo=0.5, hi=1.5)}, outs, opset=18, inits=inits)


def test_reduce_nan_propagates():
    x = _x(3, 20)
    x[1, 7] = np.nan
    cases = [(op, a) for op in ("ReduceMax", "ReduceMin") for a in ([0], [1])]
    nodes, inits, outs = _reduce_graph(cases, 13)
    _run(nodes, {"x": x, "p": x + 1}, outs, opset=13, inits=inits)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_reduce_integers(dtype):
    x = _x(2, 3, 5, dtype=dtype, lo=-3, hi=4)
    cases = [(op, a) for op in lower_reduce.INT_KINDS for a in ([1], [0, 2], None)]
    nodes, inits, outs = _reduce_graph(cases, 18, keepdims=0)
    _run([helper.make_node("Identity", ["x"], ["p"]), *nodes], {"x": x}, outs, opset=18, inits=inits)


def test_threads_agree():
    x, s = _x(4, 64, 300), _x(300)
    nodes = [
        helper.make_node("ReduceMean", ["x"], ["y"], axes=[2]),
        helper.make_node("ReduceMax", ["x"], ["z"], axes=[1]),
        helper.make_node("LayerNormalization", ["x", "s"], ["ln"]),
        helper.make_node("Reshape", ["x", "shape"], ["img"]),
        helper.make_node("MaxPool", ["img"], ["mp"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("AveragePool", ["img"], ["ap"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["img"], ["gap"]),
    ]
    outs = ("y", "z", "ln", "mp", "ap", "gap")
    inits = [("s", s), ("shape", np.array([4, 64, 15, 20], np.int64))]
    a = _run(nodes, {"x": x}, outs, opset=17, inits=inits)
    b = _run(nodes, {"x": x}, outs, opset=17, inits=inits, threads=2)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])


# -- ArgMax / ArgMin, TopK, CumSum --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.int8, np.uint8])
def test_arg_extreme(dtype):
    x = _x(3, 6, 5, dtype=np.int64, lo=0, hi=4).astype(dtype)  # few distinct values: many ties
    cases = [(op, a, k, la) for op in ("ArgMax", "ArgMin") for a in (0, 1, -1) for k in (0, 1) for la in (0, 1)]
    nodes = [
        helper.make_node(op, ["x"], [f"y{i}"], axis=a, keepdims=k, select_last_index=la)
        for i, (op, a, k, la) in enumerate(cases)
    ]
    outs = [f"y{i}" for i in range(len(cases))]
    _run(nodes, {"x": x}, outs, opset=13, out_types=[TensorProto.INT64] * len(outs))


def test_arg_max_nan():
    x = _x(4, 9)
    x[1, [3, 6]] = np.nan
    nodes = [helper.make_node(op, ["x"], [f"{op}{la}"], axis=1, select_last_index=la)
             for op in ("ArgMax", "ArgMin") for la in (0, 1)]  # fmt: skip
    outs = [n.output[0] for n in nodes]
    _run(nodes, {"x": x}, outs, opset=13, out_types=[TensorProto.INT64] * len(outs))


def _top_k_nodes(cases):
    nodes, inits, outs = [], [], []
    for i, (axis, k, largest) in enumerate(cases):
        nodes.append(helper.make_node("TopK", ["x", f"k{i}"], [f"v{i}", f"i{i}"], axis=axis, largest=largest))
        inits.append((f"k{i}", np.array([k], np.int64)))
        outs += [f"v{i}", f"i{i}"]
    return nodes, inits, outs


TOP_K_TYPES = [np.float32, np.float64, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
               np.uint64]  # fmt: skip


@pytest.mark.parametrize("dtype", TOP_K_TYPES)
def test_top_k(dtype):
    x = _x(3, 12, 5, dtype=np.int64, lo=0, hi=5).astype(dtype)  # ties resolve by index
    nodes, inits, outs = _top_k_nodes([(-1, 3, 1), (1, 12, 0), (0, 1, 1), (1, 5, 1), (-1, 5, 0), (1, 0, 1)])
    _run(nodes, {"x": x}, outs, inits=inits, out_types=[ONNX_TYPE[dtype], TensorProto.INT64] * len(nodes))


@pytest.mark.parametrize("dtype", [t for t in TOP_K_TYPES if np.dtype(t).kind in "iu"])
def test_top_k_full_range_integers(dtype):
    """Values across the whole range of the type: unsigned values above the signed maximum rank as the largest."""
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, (4, 9), dtype=dtype, endpoint=True)
    x[0, :2] = info.max
    x[1, :2] = info.min
    nodes, inits, outs = _top_k_nodes([(-1, 4, 1), (-1, 4, 0), (0, 2, 1)])
    _run(nodes, {"x": x}, outs, inits=inits, out_types=[ONNX_TYPE[dtype], TensorProto.INT64] * len(nodes))


def test_top_k_old_opsets_floats_and_nan():
    x = _x(2, 100)
    x[0, 5] = x[1, 7] = np.nan
    x[1, 50] = x[1, 60]
    nodes, inits, outs = _top_k_nodes([(-1, 10, 0), (-1, 10, 1), (1, 100, 1)])
    types = [TensorProto.FLOAT, TensorProto.INT64]
    _run(nodes, {"x": x}, outs, inits=inits, out_types=types * len(nodes))
    _run(helper.make_node("TopK", ["x"], ["v", "i"], k=2, axis=1), {"x": x}, ("v", "i"), opset=9, out_types=types)
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=0)
    _run(node, {"x": x}, ("v", "i"), opset=10, inits=[("k", np.array([1], np.int64))], out_types=types)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_cum_sum(dtype):
    x = _x(3, 4, 7, dtype=dtype)
    cases = [(a, e, r) for a in (0, 1, -1) for e in (0, 1) for r in (0, 1)]
    nodes = [
        helper.make_node("CumSum", ["x", f"a{i}"], [f"y{i}"], exclusive=e, reverse=r)
        for i, (_, e, r) in enumerate(cases)
    ]
    inits = [(f"a{i}", np.array(a, np.int32)) for i, (a, _, _) in enumerate(cases)]
    _run(nodes, {"x": x}, [f"y{i}" for i in range(len(cases))], inits=inits)


# -- Softmax, LogSoftmax ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("opset", [11, 13])
def test_softmax(opset, portable):
    shapes = ((2, 1000), (3, 1), (4, 7), (2, 8), (5, 33), (2, 3, 4, 5))
    feeds = {f"x{j}": _x(*s) * 4 for j, s in enumerate(shapes)}
    nodes = []
    for op in ("Softmax", "LogSoftmax"):
        for j, shape in enumerate(shapes):
            for axis in range(-1, len(shape)):
                nodes.append(helper.make_node(op, [f"x{j}"], [f"{op}_{j}_{axis}"], axis=axis))
    _run(nodes, feeds, [n.output[0] for n in nodes], opset=opset)


def test_softmax_extremes():
    x = np.array([[1e4, 0, -1e4, 3], [-100, -100, -100, -100], [88, 87, -200, 0]] * 3, np.float32)
    big = _x(64, 512) * 10
    nodes = [helper.make_node(op, [x_], [f"{op}{x_}"]) for op in ("Softmax", "LogSoftmax") for x_ in ("x", "big")]
    outs = [n.output[0] for n in nodes]
    a = _run(nodes, {"x": x, "big": big}, outs, opset=13)
    b = _run(nodes, {"x": x, "big": big}, outs, opset=13, threads=2)
    for k in outs:
        np.testing.assert_array_equal(a[k], b[k])


# -- normalisations -----------------------------------------------------------------------------------------------
def test_layer_normalization(portable):
    nodes, feeds, inits, outs = [], {}, [], []
    for i, (shape, axis) in enumerate((((2, 5, 16), -1), ((3, 4, 6), 1), ((2, 3, 37), -1), ((4, 768), -1))):
        feeds[f"x{i}"] = _x(*shape) * 3 + 1
        norm = shape[axis % len(shape) :]
        inits += [(f"s{i}", _x(*norm)), (f"b{i}", _x(*norm))]
        nodes.append(helper.make_node("LayerNormalization", [f"x{i}", f"s{i}", f"b{i}"], [f"y{i}"], axis=axis))
        stats = [f"z{i}", f"m{i}", f"inv{i}"]
        nodes.append(helper.make_node("LayerNormalization", [f"x{i}", f"s{i}"], stats, axis=axis, epsilon=1e-3))
        outs += [f"y{i}", *stats]
    feeds["a"], feeds["sa"] = _x(3, 10), _x(10)  # a scale that is an activation
    nodes.append(helper.make_node("LayerNormalization", ["a", "sa"], ["ya"]))
    _run(nodes, feeds, [*outs, "ya"], inits=inits)


@pytest.mark.parametrize("opset", [9, 15])
def test_batch_normalization(opset):
    nodes, feeds, inits = [], {}, []
    for i, shape in enumerate([(2, 4, 5, 5), (3, 6), (1, 3, 17)]):
        c = shape[1]
        names = [f"{p}{i}" for p in "sbmv"]
        inits += [(names[0], _x(c)), (names[1], _x(c)), (names[2], _x(c)), (names[3], _x(c, lo=0.5, hi=2))]
        feeds[f"x{i}"] = _x(*shape)
        nodes.append(helper.make_node("BatchNormalization", [f"x{i}", *names], [f"y{i}"], epsilon=1e-3))
    _run(nodes, feeds, [f"y{i}" for i in range(len(nodes))], opset=opset, inits=inits)


def test_instance_normalization(portable):
    nodes, feeds, inits = [], {}, []
    for i, shape in enumerate([(2, 3, 5, 5), (1, 4, 33), (2, 2, 3, 4, 5)]):
        inits += [(f"s{i}", _x(shape[1])), (f"b{i}", _x(shape[1]))]
        feeds[f"x{i}"] = _x(*shape) + 2
        nodes.append(helper.make_node("InstanceNormalization", [f"x{i}", f"s{i}", f"b{i}"], [f"y{i}"], epsilon=1e-4))
    _run(nodes, feeds, [f"y{i}" for i in range(len(nodes))], inits=inits)


@pytest.mark.parametrize("opset", [18, 21])
def test_group_normalization(opset, portable):
    per = 3 if opset == 18 else 6  # opset 18: scale and bias per group
    inits = [("s", _x(per)), ("b", _x(per)), ("s1", _x(6 if opset == 21 else 1)), ("b1", _x(6 if opset == 21 else 1))]
    nodes = [
        helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=3, epsilon=1e-5),
        helper.make_node("GroupNormalization", ["x", "s1", "b1"], ["y1"], num_groups=1),
    ]
    _run(nodes, {"x": _x(2, 6, 5, 7)}, ["y", "y1"], opset=opset, inits=inits)


def test_lp_normalization():
    x = _x(3, 4, 5)
    x[1, :, 2] = 0
    x[2, 1, :] = 0
    nodes = [helper.make_node("LpNormalization", ["x"], [f"y{p}{a}"], p=p, axis=a) for p in (1, 2) for a in (-1, 1, 0)]
    _run(nodes, {"x": x}, [n.output[0] for n in nodes])
