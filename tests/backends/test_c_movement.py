"""C backend data movement and recurrent kernels against the numpy reference: Transpose, Slice, Concat, Split,
Expand, Tile, Pad, DepthToSpace, SpaceToDepth, Gather*, ScatterND, Resize, Upsample, LSTM, GRU, RNN."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge.backends.c import build

RNG = np.random.default_rng(0)


def _check(nodes, feeds: dict, outs: list[str], inits=(), opset: int = 18, threads: int = 1) -> None:
    """Builds the graph, runs it on numpy and C, and compares every output (exact unless float)."""
    vi = helper.make_tensor_value_info
    ins = [vi(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for k, v in feeds.items()]
    o = [vi(k, TensorProto.UNDEFINED, None) for k in outs]
    g = helper.make_graph(nodes, "g", ins, o, [numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    model = burnedge.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]))
    want = burnedge.Session(model).run(feeds)
    got = burnedge.Session(model, backend="c", threads=threads).run(feeds)
    for k in outs:
        w, c = want[k], got[k]
        assert c.dtype == w.dtype and c.shape == w.shape, (k, c.dtype, c.shape, w.dtype, w.shape)
        if w.dtype.kind == "f":
            scale = max(float(np.abs(w).max(initial=0.0)), 1e-30)
            err = float(np.abs(w.astype(np.float64) - c).max(initial=0.0)) / scale
            assert err <= 1e-5, (k, err)
        else:
            np.testing.assert_array_equal(c, w, err_msg=k)


def _i64(*v) -> np.ndarray:
    return np.array(v, np.int64)


def _rand(shape, dtype=np.float32) -> np.ndarray:
    if np.dtype(dtype).kind == "f":
        return RNG.standard_normal(shape).astype(dtype)
    if np.dtype(dtype) == np.bool_:
        return RNG.integers(0, 2, shape).astype(bool)
    return RNG.integers(-100, 100, shape).astype(dtype)


N = helper.make_node


@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.int16, np.int64, np.bool_, np.float64])
def test_movement_ops_every_dtype(dtype):
    x, y = _rand((2, 3, 4, 5), dtype), _rand((2, 8, 4, 6), dtype)
    nodes = [
        N("Transpose", ["x"], ["t1"], perm=[0, 2, 3, 1]),
        N("Transpose", ["x"], ["t2"], perm=[3, 1, 2, 0]),
        N("Transpose", ["x"], ["t3"]),
        N("Slice", ["x", "s", "e", "a", "st"], ["s1"]),
        N("Slice", ["x", "b2", "e2"], ["s2"]),
        N("Concat", ["x", "c1", "x"], ["c"], axis=-2),
        N("Concat", ["x", "x"], ["c0"], axis=0),
        N("Split", ["x"], ["p1", "p2"], axis=3, num_outputs=2),
        N("Split", ["x", "sp"], ["q1", "q2", "q3"], axis=-1),
        N("Expand", ["x", "es"], ["ex"]),
        N("Tile", ["x", "rep"], ["ti"]),
        N("DepthToSpace", ["y"], ["d1"], blocksize=2, mode="CRD"),
        N("DepthToSpace", ["y"], ["d2"], blocksize=2),
        N("SpaceToDepth", ["y"], ["s2d"], blocksize=2),
    ]
    inits = [
        ("s", _i64(3, -1)), ("e", _i64(-100, 0)), ("a", _i64(3, 1)), ("st", _i64(-2, -1)),
        ("b2", _i64(1, 0, 1)), ("e2", _i64(2, 2**62, -1)), ("c1", _rand((2, 3, 2, 5), dtype)),
        ("sp", _i64(1, 3, 1)), ("es", _i64(3, 1, 1, 1, 1)), ("rep", _i64(1, 2, 1, 3)),
    ]  # fmt: skip
    outs = ["t1", "t2", "t3", "s1", "s2", "c", "c0", "p1", "p2", "q1", "q2", "q3", "ex", "ti", "d1", "d2", "s2d"]
    _check(nodes, {"x": x, "y": y}, outs, inits)


def test_older_opset_forms():
    x = _rand((4, 6, 3))
    nodes = [
        N("Slice", ["x"], ["s"], starts=[1, 0], ends=[3, 10], axes=[0, 2]),
        N("Split", ["x"], ["a", "b"], axis=1, split=[2, 4]),
        N("Split", ["x"], ["c", "d"], axis=1),
        N("Concat", ["x", "x"], ["cc"]),
        N("Pad", ["x"], ["p"], pads=[0, 1, 2, 0, 2, 1], mode="edge"),
        N("Pad", ["x"], ["q"], pads=[1, 0, 0, 1, 0, 0], value=2.5),
        N("Tile", ["x", "tiles", "axis"], ["t"]),
        N("DepthToSpace", ["y"], ["dd"], blocksize=2),
        N("Upsample", ["y"], ["u"], height_scale=2.0, width_scale=3.0, mode="NN"),
    ]
    inits = [("tiles", _i64(3)), ("axis", _i64(1))]
    _check(nodes, {"x": x, "y": _rand((1, 8, 2, 3))}, ["s", "a", "b", "c", "d", "cc", "p", "q", "t", "dd", "u"],
           inits, opset=2)  # fmt: skip
    _check([N("Pad", ["x"], ["p"], paddings=[0, 1, 2, 0, 2, 1], mode="reflect")], {"x": x}, ["p"], opset=1)


def test_split_v13_and_big_copies_threads():
    x = _rand((3, 64, 40, 33))
    nodes = [
        N("Split", ["x", "sp"], ["a", "b"], axis=1),
        N("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]),
        N("Transpose", ["x"], ["t2"], perm=[3, 2, 1, 0]),
        N("Slice", ["x", "s", "e", "ax", "st"], ["sl"]),
        N("Concat", ["x", "x"], ["c"], axis=3),
    ]
    inits = [("sp", _i64(24, 40)), ("s", _i64(-1, 1)), ("e", _i64(-1000, 40)), ("ax", _i64(1, 3)), ("st", _i64(-3, 2))]
    for threads in (1, 2):
        _check(nodes, {"x": x}, ["a", "b", "t", "t2", "sl", "c"], inits, opset=13, threads=threads)


def test_transpose_wide_elements_and_rank_one():
    x = (_rand((3, 5)) + 1j * _rand((3, 5))).astype(np.complex128)
    nodes = [N("Transpose", ["x"], ["t"]), N("Slice", ["v", "s", "e"], ["sv"]), N("Identity", ["v"], ["iv"])]
    _check(nodes, {"x": x, "v": _rand((7,))}, ["t", "sv"], [("s", _i64(-2)), ("e", _i64(-10))], opset=13)
    # 4-byte transposes in 8x8 register blocks, with ragged edges
    nodes = [N("Transpose", ["m"], ["mt"]), N("Transpose", ["k"], ["kt"], perm=[0, 2, 1])]
    _check(nodes, {"m": _rand((37, 45)), "k": _rand((3, 19, 50), np.int32)}, ["mt", "kt"], opset=13)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_modes(mode):
    x = _rand((2, 3, 5, 6))
    nodes = [
        N("Pad", ["x", "p1"], ["a"], mode=mode),
        N("Pad", ["x", "p2", "", "ax"], ["b"], mode=mode),
        N("Pad", ["x", "p3"], ["c"], mode=mode),
        N("Pad", ["i", "p1"], ["d"], mode=mode),
    ]
    inits = [("p1", _i64(0, 0, 2, 3, 0, 1, 1, 4)), ("p2", _i64(1, -1, 2, 0)), ("ax", _i64(1, -1)),
             ("p3", _i64(0, 0, -1, 0, 0, 0, 0, 0))]  # fmt: skip
    if mode == "constant":
        nodes.append(N("Pad", ["x", "p1", "cv"], ["e"]))
        nodes.append(N("Pad", ["i", "p2", "ci", "ax"], ["f"]))
        inits += [("cv", np.array(-1.5, np.float32)), ("ci", np.array(7, np.int32))]
    outs = ["a", "b", "c", "d"] + (["e", "f"] if mode == "constant" else [])
    _check(nodes, {"x": x, "i": _rand((2, 3, 5, 6), np.int32)}, outs, inits)


def test_pad_runtime_constant_value():
    nodes = [N("Pad", ["x", "p", "v"], ["y"])]
    _check(nodes, {"x": _rand((3, 4)), "v": np.array(4.25, np.float32)}, ["y"], [("p", _i64(1, 2, 0, 3))])


def test_gather_family():
    data, table = _rand((4, 5, 6)), _rand((50, 16))
    feeds = {
        "data": data,
        "table": table,
        "ids": RNG.integers(-50, 50, (2, 7)).astype(np.int64),
        "i32": RNG.integers(-5, 5, (3,)).astype(np.int32),
        "ge": RNG.integers(-5, 5, (4, 3, 6)).astype(np.int64),
        "nd": np.array([[[1, -2], [3, 4]], [[0, 0], [-1, 1]]], np.int64),
        "nd1": np.array([[2], [-1]], np.int32),
        "ints": _rand((4, 5, 6), np.int32),
    }
    nodes = [
        N("Gather", ["table", "ids"], ["emb"]),
        N("Gather", ["data", "i32"], ["g1"], axis=1),
        N("Gather", ["data", "i32"], ["g2"], axis=-1),
        N("Gather", ["ints", "i32"], ["g3"], axis=1),
        N("Gather", ["data", "c0"], ["k0"], axis=1),
        N("Gather", ["data", "c1"], ["k1"], axis=2),
        N("Gather", ["data", "c2"], ["k2"], axis=0),
        N("Gather", ["data", "c3"], ["k3"], axis=2),
        N("Gather", ["wt", "ids"], ["k4"]),
        N("GatherElements", ["data", "ge"], ["e1"], axis=1),
        N("GatherElements", ["data", "ge2"], ["e2"], axis=2),
        N("GatherElements", ["ints", "ge"], ["e3"], axis=-2),
        N("GatherND", ["data", "nd"], ["n1"]),
        N("GatherND", ["data", "nd1"], ["n2"], batch_dims=0),
        N("GatherND", ["data", "nb"], ["n3"], batch_dims=1),
    ]
    inits = [("c0", np.array(-2, np.int64)), ("c1", _i64(0, 2, 4)), ("c2", _i64(3, 1, -3)), ("c3", _i64(5, 0, 1)),
             ("wt", _rand((60, 3), np.int16)), ("ge2", RNG.integers(0, 6, (4, 5, 8)).astype(np.int64)),
             ("nb", np.array([[[1, 2]], [[0, -1]], [[4, 5]], [[2, 2]]], np.int64))]  # fmt: skip
    outs = ["emb", "g1", "g2", "g3", "k0", "k1", "k2", "k3", "k4", "e1", "e2", "e3", "n1", "n2", "n3"]
    _check(nodes, feeds, outs, inits)


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_nd(reduction):
    data = _rand((4, 5, 3))
    feeds = {"data": data, "upd": _rand((3, 3)), "upd2": _rand((2, 5, 3))}
    nodes = [
        N("ScatterND", ["data", "idx", "upd"], ["a"], reduction=reduction),
        N("ScatterND", ["data", "idx2", "upd2"], ["b"], reduction=reduction),
    ]
    inits = [("idx", np.array([[0, 1], [-1, 4], [0, 1]], np.int64)), ("idx2", np.array([[2], [-4]], np.int32))]
    if reduction == "none":
        inits[0] = ("idx", np.array([[0, 1], [-1, 4], [2, 2]], np.int64))
        nodes.append(N("ScatterND", ["ints", "idx2", "iu"], ["c"]))
        feeds |= {"ints": _rand((4, 2), np.int64), "iu": _rand((2, 2), np.int64)}
    _check(nodes, feeds, ["a", "b"] + (["c"] if reduction == "none" else []), inits)


COORDS = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
          "tf_crop_and_resize", "half_pixel_symmetric"]  # fmt: skip


@pytest.mark.parametrize("coord", COORDS)
def test_resize_modes(coord):
    x = _rand((2, 3, 4, 5))
    nodes, outs, i = [], [], 0
    inits = [("up", np.array([1, 1, 2, 1.5], np.float32)), ("down", np.array([1, 1, 0.5, 0.6], np.float32)),
             ("roi", np.array([0, 0, 0.2, -0.1, 1, 1, 0.9, 1.3], np.float32)), ("sz", _i64(2, 3, 7, 3))]  # fmt: skip
    modes = [("nearest", m) for m in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")]
    for mode, nearest in modes + [("linear", None), ("cubic", None)]:
        for s in ("up", "down", "sz"):
            kw = {"mode": mode, "coordinate_transformation_mode": coord, "extrapolation_value": -2.0}
            if nearest:
                kw["nearest_mode"] = nearest
            if mode == "cubic":
                kw["exclude_outside"] = i % 2
            roi = "roi" if coord == "tf_crop_and_resize" else ""
            nodes.append(N("Resize", ["x", roi, "" if s == "sz" else s, "sz" if s == "sz" else ""], [f"r{i}"], **kw))
            outs.append(f"r{i}")
            i += 1
    nodes.append(N("Resize", ["i", "", "up"], ["ri"], mode="nearest", coordinate_transformation_mode=coord))
    _check(nodes, {"x": x, "i": _rand((2, 3, 4, 5), np.uint8)}, outs + ["ri"], inits, opset=19)


def test_resize_axes_antialias_and_old_versions():
    x = _rand((1, 2, 9, 10))
    nodes = [
        N("Resize", ["x", "", "down"], ["aa"], mode="linear", antialias=1),
        N("Resize", ["x", "", "down"], ["ab"], mode="cubic", antialias=1),
        N("Resize", ["x", "", "", "sz2"], ["ax"], mode="linear", axes=[3, 2], keep_aspect_ratio_policy="not_larger"),
        N("Resize", ["x", "", "one"], ["same"], mode="linear"),
    ]
    inits = [("down", np.array([1, 1, 0.4, 0.7], np.float32)), ("sz2", _i64(4, 6)), ("one", np.ones(4, np.float32))]
    _check(nodes, {"x": x}, ["aa", "ab", "ax", "same"], inits, opset=19)
    nodes = [N("Resize", ["x", "up"], ["r10"], mode="linear"), N("Resize", ["x", "dn"], ["n10"]),
             N("Upsample", ["x", "up"], ["u9"], mode="linear")]  # fmt: skip
    up, dn = np.array([1, 1, 2, 3], np.float32), np.array([1, 1, 0.5, 0.5], np.float32)
    _check(nodes[:2], {"x": x}, ["r10", "n10"], [("up", up), ("dn", dn)], opset=10)
    _check(nodes[2:], {"x": x}, ["u9"], [("up", up)], opset=9)
    _check([N("Upsample", ["x"], ["u7"], scales=[1.0, 1.0, 2.0, 2.0], mode="bilinear")], {"x": x}, ["u7"], opset=7)
    roi = np.array([0, 0, 0.1, 0.2, 1, 1, 0.8, 1.1], np.float32)
    nodes = [
        N("Resize", ["x", "roi", "up"], ["a"], mode="linear", coordinate_transformation_mode="tf_crop_and_resize"),
        N("Resize", ["x", "rroi", "up"], ["b"], mode="linear"),  # a runtime roi, unused by half_pixel
        N("Resize", ["x", "", "", "sz"], ["c"], mode="nearest"),
    ]
    inits = [("roi", roi), ("up", up), ("sz", _i64(1, 2, 5, 2))]
    _check(nodes, {"x": x, "rroi": roi}, ["a", "b", "c"], inits, opset=11)


def test_resize_big_threads():
    x = _rand((2, 16, 40, 40))
    nodes = [N("Resize", ["x", "", "up"], ["a"], mode="linear"), N("Resize", ["x", "", "up"], ["b"])]
    _check(nodes, {"x": x}, ["a", "b"], [("up", np.array([1, 1, 2, 2], np.float32))], threads=2)


def _recurrent(
    op,
    T=5,
    B=3,
    n_in=4,
    H=6,
    direction="forward",
    layout=0,
    h0=True,
    bias=True,
    P=False,
    threads=1,
    runtime=False,
    **kw,
):
    G, D = {"LSTM": 4, "GRU": 3, "RNN": 1}[op], 2 if direction == "bidirectional" else 1
    feeds = {"x": _rand((B, T, n_in) if layout else (T, B, n_in))}
    inits = [("W", _rand((D, G * H, n_in)) * 0.5), ("R", _rand((D, G * H, H)) * 0.5)]
    ins = ["x", "W", "R"]
    if bias:
        inits.append(("B", _rand((D, 2 * G * H))))
    ins += ["B" if bias else "", ""]
    states = ["h0", "c0"] if op == "LSTM" else ["h0"]
    for s in states:
        if h0:
            feeds[s] = _rand((B, D, H) if layout else (D, B, H))
        ins.append(s if h0 else "")
    if P:
        inits.append(("P", _rand((D, 3 * H))))
        ins.append("P")
    if runtime:  # weights as graph inputs: the kernel gets them repacked at run time
        feeds |= {k: v for k, v in inits}
        inits = []
    outs = ["y", "yh"] + (["yc"] if op == "LSTM" else [])
    node = N(op, ins, outs, hidden_size=H, direction=direction, layout=layout, **kw)
    _check([node], feeds, outs, inits, opset=14, threads=threads)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("layout", [0, 1])
def test_recurrent(op, direction, layout):
    extra = {"linear_before_reset": layout} if op == "GRU" else {}
    _recurrent(op, direction=direction, layout=layout, P=op == "LSTM" and layout == 1, **extra)


def test_recurrent_options():
    _recurrent("LSTM", h0=False, bias=False, clip=0.5, input_forget=1)
    _recurrent("LSTM", T=3, B=1, n_in=33, H=70, direction="bidirectional")
    _recurrent("GRU", B=5, n_in=17, H=40, linear_before_reset=1)
    acts = ["HardSigmoid", "Softsign", "Sigmoid", "Elu"]
    _recurrent("GRU", direction="bidirectional", activations=acts, activation_alpha=[0.3, 0.9])
    _recurrent("RNN", B=1, H=20, n_in=7, T=4, activations=["Relu"])
    _recurrent("RNN", activations=["ScaledTanh"], activation_alpha=[1.5], activation_beta=[0.5])
    acts = ["Affine", "ThresholdedRelu", "Softplus"]
    _recurrent("LSTM", activations=acts, activation_alpha=[0.2, 0.1], activation_beta=[0.3])
    _recurrent("LSTM", T=3, B=4, n_in=16, H=130, direction="reverse", threads=2)
    _recurrent("LSTM", direction="bidirectional", P=True, runtime=True)
    _recurrent("GRU", direction="bidirectional", runtime=True, linear_before_reset=1)
    _recurrent("GRU", bias=False, runtime=True)
    _recurrent("RNN", layout=1, runtime=True)
    _recurrent("GRU", T=3, B=4, n_in=16, H=150, threads=2)


PORTABLE_MAIN = r"""
#include <stdio.h>
#include "burnedge.h"
#include "rnn.h"
int main(void) {
    enum { T = 4, B = 2, I = 5, H = 19 };
    static float a[5 * 7], b[7 * 9], c[5 * 9], x[T * B * I], wt[I * 4 * H], rt[H * 4 * H], bias[4 * H];
    static float y[T * B * H], yh[B * H], yc[B * H], s[20000];
    for (int i = 0; i < 35; i++) a[i] = (float)(i % 5) - 1.5f;
    for (int i = 0; i < 63; i++) b[i] = (float)(i % 7) * 0.5f;
    for (int i = 0; i < 45; i++) c[i] = 1.0f;
    be_rnn_gemm_acc_portable(5, 9, 7, a, 7, b, 9, c, 9);
    for (int i = 0; i < 45; i++) printf("%.9g ", c[i]);
    for (int i = 0; i < T * B * I; i++) x[i] = (float)((i * 7) % 11) * 0.3f - 1.5f;
    for (int i = 0; i < I * 4 * H; i++) wt[i] = (float)((i * 5) % 13) * 0.1f - 0.6f;
    for (int i = 0; i < H * 4 * H; i++) rt[i] = (float)((i * 3) % 17) * 0.05f - 0.4f;
    for (int i = 0; i < 4 * H; i++) bias[i] = (float)(i % 3) * 0.2f - 0.2f;
    for (int kind = 0; kind < 3; kind++) {
        be_rnn_cfg cfg = {.kind = kind, .T = T, .B = B, .I = I, .H = H, .lbr = kind == 1, .act = {0, 1, 1},
                          .x_t = B * I, .x_b = I, .y_t = B * H, .y_b = H, .s_b = H};
        be_rnn_f32(&cfg, x, wt, rt, bias, bias, NULL, NULL, NULL, y, yh, yc, s, 1);
        for (int i = 0; i < T * B * H; i++) printf("%.9g ", y[i]);
    }
    return 0;
}
"""


def test_rnn_kernel_portable_and_native_agree(tmp_path):
    """rnn.c built with -DBURNEDGE_PORTABLE (what a target without AVX2 runs) against numpy and the native build."""
    prog = tmp_path / "t.c"
    prog.write_text(PORTABLE_MAIN)
    outs = []
    for flags, sets in ((["-DBURNEDGE_PORTABLE"], ("reference",)), (["-march=native"], build.host_toolchain().sets())):
        exe, src = tmp_path / f"t{len(outs)}", tmp_path / f"kernels{len(outs)}"
        src.mkdir()
        for name, text in build.kernel_sources(sets).items():  # the sets' files, flattened (rnn.c: x86/ or reference/)
            (src / name).write_text(text)
        cmd = ["cc", "-std=c11", "-O2", *flags, "-I", str(src), str(prog), str(src / "rnn.c"), str(src / "workers.c")]
        subprocess.run([*cmd, "-o", str(exe), "-lm", "-pthread"], check=True)
        out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
        outs.append(np.array(out, np.float64))
    a = (np.arange(35) % 5 - 1.5).reshape(5, 7)
    b = (np.arange(63) % 7 * 0.5).reshape(7, 9)
    np.testing.assert_allclose(outs[0][:45].reshape(5, 9), 1 + a @ b, rtol=1e-6)
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-6)
