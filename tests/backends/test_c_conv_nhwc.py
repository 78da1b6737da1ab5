"""C backend channels-last convs: which tensors go NHWC, and chains of convs through the NHWC kernels (implicit
GEMM and channel-vectorised depthwise) against the numpy reference, every layout boundary, epilogue and shape."""

from __future__ import annotations

import cffi
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge.backends.c import build
from burnedge.backends.c.lower import conv as conv_lower
from burnedge.backends.c.lower.conv import _conv_scratch, _plan, nhwc_tensors
from burnedge.passes import optimize
from tests.backends.c_helpers import prepare

RNG = np.random.default_rng(1)
N = helper.make_node


def _rand(*shape, scale=1.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def _model(nodes, feeds: dict, outs: list[str], inits: dict) -> burnedge.Model:
    vi = helper.make_tensor_value_info
    ins = [vi(k, TensorProto.FLOAT, v.shape) for k, v in feeds.items()]
    o = [vi(k, TensorProto.UNDEFINED, None) for k in outs]
    g = helper.make_graph(nodes, "g", ins, o, [numpy_helper.from_array(a, n) for n, a in inits.items()])
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("burnedge", 1)]
    return burnedge.load(helper.make_model(g, opset_imports=opsets))


def _check(model: burnedge.Model, feeds: dict, outs: list[str], threads: int = 1) -> None:
    want = burnedge.Session(model).run(feeds)
    got = burnedge.Session(model, backend="c", threads=threads).run(feeds)
    for k in outs:
        w, c = want[k], got[k]
        assert c.shape == w.shape, (k, c.shape, w.shape)
        err = float(np.abs(w.astype(np.float64) - c).max()) / max(float(np.abs(w).max()), 1e-30)
        assert err <= 1e-5, (k, err)


def _fconv(name, x, w, b="", res="", act="", params=(), **attrs):
    ins = [x, w, b, res] if res else [x, w, b] if b else [x, w]
    extra = {"activation": act, **({"activation_params": list(params)} if params else {})} if act else {}
    return N("FusedConv", ins, [name], domain="burnedge", **extra, **attrs)


def _chain(c: int, m: int, hw: tuple[int, int], batch: int = 1, stride: int = 1, act: str = "Relu", params=()):
    """stem 3x3 (NCHW in) -> depthwise 3x3 -> pointwise -> 3x3 + residual -> depthwise 5x5 -> pointwise (NCHW out)."""
    h, w = hw
    feeds = {"x": _rand(batch, 3, h, w)}
    inits = {"w0": _rand(c, 3, 3, 3, scale=0.4), "b0": _rand(c), "wd": _rand(c, 1, 3, 3, scale=0.5), "bd": _rand(c),
             "w1": _rand(c, c, 1, 1, scale=0.3), "b1": _rand(c), "w2": _rand(c, c, 3, 3, scale=0.1), "b2": _rand(c),
             "w5": _rand(c, 1, 5, 5, scale=0.2), "w3": _rand(m, c, 1, 1, scale=0.3), "b3": _rand(m)}  # fmt: skip
    a = {"act": act, "params": params}
    nodes = [
        _fconv("s", "x", "w0", "b0", pads=[1, 1, 1, 1], **a),
        _fconv("d", "s", "wd", "bd", pads=[1, 1, 1, 1], group=c, strides=[stride, stride], **a),
        _fconv("p", "d", "w1", "b1", **a),
        _fconv("r", "p", "w2", "b2", res="p", pads=[1, 1, 1, 1], **a),
        _fconv("d5", "r", "w5", "", pads=[2, 2, 2, 2], group=c, **a),
        _fconv("y", "d5", "w3", "b3", **a),
    ]
    return _model(nodes, feeds, ["y"], inits), feeds


def test_layouts_are_chosen_from_the_graph():
    model, _ = _chain(8, 5, (9, 7))
    g = optimize(model.graph.copy())
    assert nhwc_tensors(g) == {"s", "d", "p", "r", "d5"}
    kinds = {n.outputs[0]: _plan(g, n)[0] for n in g.nodes}
    assert kinds == {"s": "stem", "d": "dwc", "p": "nhwc", "r": "nhwc", "d5": "dwc", "y": "nhwc"}
    # a tensor read by anything but a conv, a graph output, or one read by a grouped conv stays NCHW
    feeds = {"x": _rand(1, 4, 6, 6)}
    inits = {"w": _rand(4, 4, 3, 3), "wg": _rand(4, 2, 3, 3)}
    nodes = [N("Conv", ["x", "w"], ["a"], pads=[1, 1, 1, 1]), N("Relu", ["a"], ["b"]),
             N("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1]), N("Conv", ["y", "wg"], ["z"], pads=[1, 1, 1, 1], group=2),
             N("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), N("Conv", ["c", "wg"], ["u"], group=2)]  # fmt: skip
    g = optimize(_model(nodes, feeds, ["b", "y", "z", "u"], inits).graph.copy())
    assert nhwc_tensors(g) == set()
    # KxK convs of one group still take an NHWC-family kernel (flags 0: NCHW on both sides; with 4 channels in and
    # out, the stem kernel), grouped ones the NCHW one
    kinds = [_plan(g, n)[:3:2] for n in g.nodes if n.op_type in ("Conv", "FusedConv")]
    assert kinds == [("stem", 0), ("stem", 0), ("gemm", 0), ("stem", 0), ("gemm", 0)]


@pytest.mark.parametrize(
    "c, m, hw, batch, stride",
    [(8, 5, (9, 7), 1, 1), (64, 12, (25, 5), 1, 1), (16, 20, (12, 12), 2, 2), (13, 8, (7, 11), 1, 2),
     (3, 17, (5, 5), 1, 1), (40, 3, (1, 9), 1, 1)],
)  # fmt: skip
def test_chains(c, m, hw, batch, stride):
    model, feeds = _chain(c, m, hw, batch, stride)
    _check(model, feeds, ["y"])


@pytest.mark.parametrize("act, params", [("", ()), ("Clip", (0.0, 6.0)), ("LeakyRelu", (0.1,)), ("HardSwish", ()),
                                         ("Sigmoid", ()), ("Gelu", ())])  # fmt: skip
def test_chain_epilogues(act, params):
    model, feeds = _chain(12, 9, (6, 5), act=act, params=params)
    _check(model, feeds, ["y"])


def test_geometries_and_residual_layouts():
    """Asymmetric and auto pads, dilations, odd kernels, 1-D convs, an NCHW residual into an NHWC conv."""
    feeds = {"x": _rand(2, 6, 11, 10), "r": _rand(2, 10, 10, 10), "x1": _rand(1, 5, 23)}
    inits = {"wa": _rand(10, 6, 3, 3, scale=0.3), "wb": _rand(10, 10, 2, 3, scale=0.3),
             "wd": _rand(10, 1, 3, 3), "wd2": _rand(10, 1, 1, 4), "wc": _rand(7, 10, 1, 1), "b": _rand(10),
             "w1": _rand(9, 5, 3, scale=0.3), "wd1": _rand(9, 1, 5), "w1b": _rand(4, 9, 1)}  # fmt: skip
    nodes = [
        _fconv("a", "x", "wa", "b", res="r", pads=[0, 2, 1, 0], act="Relu"),  # NCHW residual, NHWC output
        _fconv("bb", "a", "wb", "", auto_pad="SAME_UPPER", strides=[2, 1]),
        _fconv("d", "bb", "wd", "b", dilations=[2, 3], pads=[2, 3, 2, 3], group=10),
        _fconv("d2", "d", "wd2", "", auto_pad="SAME_LOWER", strides=[1, 2], group=10),
        _fconv("y", "d2", "wc", "", dilations=[1, 1]),
        _fconv("e", "x1", "w1", "", pads=[1, 2], strides=[2]),  # 1-D chain
        _fconv("f", "e", "wd1", "", pads=[2, 2], group=9, dilations=[2]),
        _fconv("y1", "f", "w1b", "", res=""),
    ]
    model = _model(nodes, feeds, ["y", "y1"], inits)
    assert {"a", "bb", "d", "d2", "e", "f"} <= nhwc_tensors(optimize(model.graph.copy()))
    _check(model, feeds, ["y", "y1"])


@pytest.mark.parametrize("in_nhwc, out_nhwc", [(False, False), (True, False), (False, True), (True, True)])
def test_winograd(in_nhwc, out_nhwc):
    """3x3 stride-1 convs with 32+ channels: odd and even planes, a residual, every layout on either side."""
    c, m = 32, 40
    feeds = {"x": _rand(2, c, 12, 11), "r": _rand(2, m, 12, 11)}
    inits = {"wi": _rand(c, c, 1, 1, scale=0.3), "w": _rand(m, c, 3, 3, scale=0.1), "b": _rand(m),
             "wo": _rand(5, m, 1, 1), "w2": _rand(m, m, 3, 3, scale=0.1)}  # fmt: skip
    nodes = [_fconv("xi", "x", "wi", "") if in_nhwc else N("Identity", ["x"], ["xi"])]
    nodes.append(_fconv("y", "xi", "w", "b", res="r", pads=[1, 1, 1, 1], act="Relu"))
    nodes.append(_fconv("yo", "y", "wo", "") if out_nhwc else N("Relu", ["y"], ["yo"]))
    nodes.append(_fconv("z", "xi", "w", "", pads=[0, 0, 0, 0], act="Clip", params=(-1.0, 1.0)))  # 10 x 9 outputs
    nodes.append(_fconv("z2", "z", "w2", "b", pads=[2, 1, 0, 1]))  # from NHWC, asymmetric pads
    model = _model(nodes, feeds, ["yo", "z2"], inits)
    src = prepare(model.graph)[1].source
    assert src.count("be_conv_wino_f32(") == 3, src
    _check(model, feeds, ["yo", "z2"])
    _check(model, feeds, ["yo", "z2"], threads=2)  # both images' padded copies (46 KB) made on two threads


@pytest.mark.parametrize("in_nhwc", [False, True])
def test_winograd_shared(in_nhwc):
    """Weights past 1 MB over a small plane (conv.h be_conv_wino_shared): one V for the threads, jobs by column
    panel; two images, odd planes (a last row panel of one patch), 144 outputs (nine panels), a residual."""
    c, m = 136, 144
    assert 64 * c * m > conv_lower.WINO_SHARED_U
    feeds = {"x": _rand(2, c, 9, 10), "r": _rand(2, m, 9, 10)}
    inits = {"wi": _rand(c, c, 1, 1, scale=0.1), "w": _rand(m, c, 3, 3, scale=0.05), "b": _rand(m)}
    nodes = [_fconv("xi", "x", "wi", "") if in_nhwc else N("Identity", ["x"], ["xi"])]
    nodes.append(_fconv("y", "xi", "w", "b", res="r", pads=[1, 1, 1, 1], act="Relu"))
    model = _model(nodes, feeds, ["y"], inits)
    assert prepare(model.graph)[1].source.count("be_conv_wino_f32(") == 1
    one = burnedge.Session(model, backend="c", threads=1).run(feeds)["y"]
    np.testing.assert_array_equal(one, burnedge.Session(model, backend="c", threads=2).run(feeds)["y"])
    _check(model, feeds, ["y"])


def test_chain_threads_agree():
    model, feeds = _chain(32, 16, (20, 18), batch=2)  # with a Winograd conv
    one = burnedge.Session(model, backend="c", threads=1).run(feeds)["y"]
    for threads in (2, 3):
        np.testing.assert_array_equal(one, burnedge.Session(model, backend="c", threads=threads).run(feeds)["y"])
    _check(model, feeds, ["y"], threads=2)


def test_scratch_sizes_match_the_kernels():
    """The lowering's scratch bytes equal the C headers' be_*_scratch for every NHWC-family conv of a few chains."""
    cases = []
    # the last: a Winograd conv in the shared mode (136 x 136 x 16 weights past 1 MB on an 8 x 8 plane)
    chains = [(8, 5, (9, 7), 1, 1), (16, 20, (12, 12), 2, 2), (13, 8, (7, 11), 1, 2), (64, 12, (25, 5), 1, 1)]
    for args in chains + [(136, 8, (8, 8), 1, 1)]:
        g = optimize(_chain(*args)[0].graph.copy())
        for node in g.nodes:
            kind, f, flags = _plan(g, node)
            cases.append((kind, f, flags, _conv_scratch(g, node)))
    assert {k for k, *_ in cases} == {"stem", "nhwc", "wino", "dwc"}
    fns = []
    for i, (kind, f, flags, _) in enumerate(cases):
        fn = {"nhwc": "be_conv_nhwc_scratch", "wino": "be_conv_wino_scratch", "dwc": "be_dwconv_nhwc_scratch",
              "stem": "be_conv_stem_scratch"}[kind]  # fmt: skip
        call = f"{fn}(&g)" if kind in ("wino", "stem") else f"{fn}(&g, {flags})"
        geo = ", ".join(map(str, f))
        fns.append(f"long scratch_{i}(void) {{ static const be_conv_geo g = {{{geo}}}; return {call}; }}")
    src = '#include "conv.h"\n#include "conv_stem.h"\n' + "\n".join(fns) + "\n"
    ffi = cffi.FFI()
    ffi.cdef("\n".join(f"long scratch_{i}(void);" for i in range(len(cases))))
    lib = ffi.dlopen(str(build.build_model(src)))
    for i, (kind, f, flags, got) in enumerate(cases):
        assert got == getattr(lib, f"scratch_{i}")() * 4, (kind, f, flags)


def test_generated_source_uses_nhwc_kernels():
    model, _ = _chain(32, 8, (8, 8))
    src = prepare(model.graph)[1].source
    assert src.count("be_conv_nhwc_f32(") == 3 and src.count("be_dwconv_nhwc_f32(") == 2
    assert src.count("be_conv_wino_f32(") == 1


@pytest.mark.parametrize("batch", [1, 2])
def test_global_pools_read_nhwc(batch):
    """A conv read only by global pools keeps NHWC; the pools read it channels-last (any of the four spellings)."""
    c, h, w = 12, 5, 7
    feeds = {"x": _rand(batch, 3, h, w)}
    inits = {"w": _rand(c, 3, 3, 3), "b": _rand(c), "w2": _rand(c, 3, 1, 1)}
    nodes = [
        _fconv("s", "x", "w", "b", pads=[1, 1, 1, 1]),
        N("GlobalAveragePool", ["s"], ["ga"]),
        N("GlobalMaxPool", ["s"], ["gm"]),
        N("AveragePool", ["s"], ["aa"], kernel_shape=[h, w]),
        N("MaxPool", ["s"], ["am"], kernel_shape=[h, w]),
        _fconv("t", "x", "w2", ""),  # read by a pool with a smaller window too: stays NCHW
        N("GlobalAveragePool", ["t"], ["ta"]),
        N("AveragePool", ["t"], ["tw"], kernel_shape=[2, 2]),
    ]
    outs = ["ga", "gm", "aa", "am", "ta", "tw"]
    model = _model(nodes, feeds, outs, inits)
    g = optimize(model.graph.copy())
    assert nhwc_tensors(g) == {"s"}
    src = prepare(model.graph)[1].source
    assert src.count("be_global_avgpool_nhwc_f32(") == 2 and src.count("be_global_maxpool_nhwc_f32(") == 2, src
    _check(model, feeds, outs)
    feeds["x"][0, 1, 2, 3] = np.nan  # the max keeps a NaN like the reference
    got = burnedge.Session(model, backend="c").run(feeds)["gm"]
    want = burnedge.Session(model).run(feeds)["gm"]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(want).any()


@pytest.mark.parametrize(
    "act,params",
    [("Relu", ()), ("Clip", (0.0, 6.0)), ("LeakyRelu", (0.1,)), ("HardSigmoid", (0.2, 0.5)), ("HardSwish", ())],
)
def test_nan_passes_the_epilogue(act, params):
    """A NaN in the input comes out as NaN through every fused activation, as in the reference: the conv tiles
    (NHWC), a depthwise and a pointwise conv (NCHW output through the tile buffer)."""
    feeds = {"x": _rand(1, 8, 9, 7)}
    feeds["x"][0, 3, 4, 2] = np.nan
    inits = {"w": _rand(16, 8, 3, 3, scale=0.2), "b": _rand(16), "wd": _rand(16, 1, 3, 3), "wp": _rand(5, 16, 1, 1)}
    nodes = [_fconv("a", "x", "w", "b", pads=[1, 1, 1, 1], act=act, params=params),
             _fconv("d", "a", "wd", "", pads=[1, 1, 1, 1], group=16, act=act, params=params),
             _fconv("y", "d", "wp", "", act=act, params=params)]  # fmt: skip
    model = _model(nodes, feeds, ["y"], inits)
    want = burnedge.Session(model).run(feeds)["y"]
    got = burnedge.Session(model, backend="c").run(feeds)["y"]
    assert np.isnan(want).any() and not np.isnan(want).all()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert float(np.abs(got[ok] - want[ok]).max()) <= 1e-5 * float(np.abs(want[ok]).max())


@pytest.mark.parametrize(
    "c,hw,k,stride,pads,dil,act,out_nhwc,batch",
    [
        (16, (48, 48), 3, 2, [1, 1, 1, 1], 1, "Relu", True, 1),  # mobilenet_v1's 48x48 stride-2 depthwise
        (24, (29, 33), 3, 2, [1, 1, 1, 1], 1, "Clip", False, 2),  # odd planes, an NCHW output, two images
        (8, (40, 30), 5, 2, [2, 1, 0, 2], 1, "HardSwish", True, 1),  # 25 taps, asymmetric pads, the generic epilogue
        (32, (28, 28), 3, 2, [0, 0, 0, 0], 2, "", True, 1),  # dilation, no padding
        # 3x3 stride 1 with rows of more than 1638 padded floats (a band of at most 2 output rows): four pixels of a
        # row at a time, then single pixels, the borders tap by tap
        (48, (5, 41), 3, 1, [1, 1, 1, 1], 1, "Clip", True, 2),  # three 16-channel blocks, 3 pixels after the fours
        (40, (4, 47), 3, 1, [1, 1, 1, 1], 1, "Relu", False, 1),  # blocks of 16, the 8-channel rest, 1 pixel after
        (8, (6, 210), 3, 1, [1, 0, 0, 1], 1, "HardSwish", True, 1),  # asymmetric pads, the generic epilogue
        (16, (5, 111), 3, 1, [0, 0, 0, 0], 1, "", True, 1),  # no padding
        (24, (2, 80), 3, 1, [1, 1, 1, 1], 1, "Relu", True, 1),  # every row at the border
    ],
)  # fmt: skip
def test_depthwise_reads_nhwc_in_place(c, hw, k, stride, pads, dil, act, out_nhwc, batch):
    """conv_dw_nhwc.c's band_direct (C % 8 == 0, an NHWC input; strided on 28x28 or more, 3x3 stride 1 where the
    padded band would be at most 2 output rows): against numpy, on one thread and two."""
    feeds = {"x": _rand(batch, c, *hw)}
    inits = {"wi": _rand(c, c, 1, 1, scale=0.3), "wd": _rand(c, 1, k, k, scale=0.4), "bd": _rand(c),
             "wo": _rand(c, c, 1, 1, scale=0.3)}  # fmt: skip
    params = (0.0, 6.0) if act == "Clip" else ()
    nodes = [_fconv("xi", "x", "wi", ""),  # writes NHWC for the depthwise
             _fconv("d", "xi", "wd", "bd", pads=pads, group=c, strides=[stride, stride], dilations=[dil, dil],
                    act=act, params=params)]  # fmt: skip
    outs = ["d"]
    if out_nhwc:
        nodes.append(_fconv("y", "d", "wo", ""))
        outs = ["y"]
    model = _model(nodes, feeds, outs, inits)
    g = optimize(model.graph.copy())
    assert "xi" in nhwc_tensors(g) and ("d" in nhwc_tensors(g)) == out_nhwc
    _check(model, feeds, outs)
    _check(model, feeds, outs, threads=2)


@pytest.mark.parametrize(
    "c,m,hw,batch",
    [(8, 16, (48, 48), 1), (24, 40, (7, 5), 3), (16, 8, (9, 11), 2), (64, 20, (3, 3), 2), (12, 130, (6, 6), 1)],
)
@pytest.mark.parametrize("threads", [1, 2])
def test_pointwise_convs_read_in_place(c, m, hw, batch, threads):
    """conv_nhwc.c's run_lin (1x1, NHWC in and out): column tails, 8-row and 3-row tiles, panel-major small planes,
    images, an NHWC residual, every thread count."""
    feeds = {"x": _rand(batch, c, *hw)}
    inits = {"wi": _rand(c, c, 1, 1, scale=0.3), "w1": _rand(m, c, 1, 1, scale=0.3), "b1": _rand(m),
             "w2": _rand(m, m, 1, 1, scale=0.2), "wo": _rand(4, m, 3, 3, scale=0.2)}  # fmt: skip
    nodes = [_fconv("xi", "x", "wi", ""),
             _fconv("p1", "xi", "w1", "b1", act="Relu"),
             _fconv("p2", "p1", "w2", "", res="p1", act="Clip", params=(-1.0, 1.0)),
             _fconv("y", "p2", "wo", "", pads=[1, 1, 1, 1])]  # fmt: skip
    model = _model(nodes, feeds, ["y"], inits)
    assert {"xi", "p1", "p2"} <= nhwc_tensors(optimize(model.graph.copy()))
    _check(model, feeds, ["y"], threads=threads)


def test_the_layout_is_recomputed_when_the_graph_changes():
    """nhwc_tensors is kept on the graph (lower.per_graph): a graph changed afterwards gets a fresh answer."""
    model, _ = _chain(8, 5, (9, 7))
    g = optimize(model.graph.copy())
    assert "p" in nhwc_tensors(g) and nhwc_tensors(g) is nhwc_tensors(g)
    g.outputs.append("p")  # a graph output: "p" must go back to NCHW
    assert "p" not in nhwc_tensors(g) and "d" in nhwc_tensors(g)


@pytest.mark.parametrize(
    "attrs, batch, threads",
    [({"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}, 1, 1),  # a ResNet stem's pool
     ({"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}, 2, 2),
     ({"kernel_shape": [2, 3], "strides": [1, 2], "dilations": [2, 1], "ceil_mode": 1}, 1, 1),
     ({"kernel_shape": [3, 3], "strides": [3, 3], "pads": [2, 2, 2, 2]}, 1, 1)],  # wide pads
)  # fmt: skip
def test_max_pool_between_convs_runs_nhwc(attrs, batch, threads):
    """stem -> MaxPool -> conv + the pool's output as residual: the pool follows the convs channels-last (input and
    output); a pool whose output a non-conv reads, or that is a graph output, keeps both sides NCHW."""
    c = 24
    feeds = {"x": _rand(batch, 3, 19, 23)}
    inits = {"w": _rand(c, 3, 3, 3), "b": _rand(c), "w2": _rand(c, c, 3, 3, scale=0.1), "b2": _rand(c)}
    nodes = [
        _fconv("s", "x", "w", "b", pads=[1, 1, 1, 1], act="Relu"),
        N("MaxPool", ["s"], ["p"], **attrs),
        _fconv("y", "p", "w2", "b2", res="p", pads=[1, 1, 1, 1], act="Relu"),
        _fconv("t", "x", "w", "b", pads=[1, 1, 1, 1]),
        N("MaxPool", ["t"], ["tp"], **attrs),
        N("Relu", ["tp"], ["z"]),
        _fconv("u", "x", "w", "b", pads=[1, 1, 1, 1]),
        N("MaxPool", ["u"], ["up"], **attrs),
    ]
    outs = ["y", "z", "up"]
    model = _model(nodes, feeds, outs, inits)
    g = optimize(model.graph.copy())
    assert nhwc_tensors(g) == {"s", "p"}
    src = prepare(model.graph)[1].source
    assert src.count("be_maxpool2d_nhwc_f32(") == 1 and src.count("be_maxpool2d_f32") == 2, src
    _check(model, feeds, outs, threads)
    feeds["x"][0, 1, 4, 5] = np.nan  # a NaN comes through the NHWC pool where the reference has one
    got = burnedge.Session(model, backend="c", threads=threads).run(feeds)["y"]
    want = burnedge.Session(model).run(feeds)["y"]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
