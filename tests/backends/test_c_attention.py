"""The attention family on the C backend (lower/attention.py, rmsnorm.py, rotary.py, linear_attention.py,
causal_conv.py) against onnxruntime, on shapes the node tests leave out: odd head sizes, GQA with a KV cache and a
broadcast bool mask, 3-D inputs, partial interleaved rotary dims, long recurrences, and 2 threads over enough rows
to split them."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import burnedge

RNG = np.random.default_rng(17)


def _check(node, feeds: dict, outputs: list[str], threads: int = 2, tol: float = 1e-4, opset: int = 23) -> None:
    """Runs one-node graph `node` on the C backend and onnxruntime; every output agrees within `tol` relative."""
    kinds = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64}
    kinds[np.dtype(np.bool_)] = TensorProto.BOOL
    ins = [helper.make_tensor_value_info(n, kinds[a.dtype], a.shape) for n, a in feeds.items()]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs]
    g = helper.make_graph([node], "attention_family", ins, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(outputs, feeds)
    got = burnedge.Session(burnedge.load(m), backend="c", threads=threads).run(feeds)
    for name, w in zip(outputs, want, strict=True):
        g_ = got[name]
        assert g_.shape == w.shape, (name, g_.shape, w.shape)
        err = float(np.abs(g_.astype(np.float64) - w).max() / max(float(np.abs(w).max()), 1e-30))
        assert err < tol, (name, err)


def _f(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_rms_normalization_odd_shapes(axis):
    x = _f(9, 41, 53)
    scale = _f(*x.shape[axis % 3 :])
    node = helper.make_node("RMSNormalization", ["x", "scale"], ["y"], axis=axis, epsilon=1e-3)
    _check(node, {"x": x, "scale": scale}, ["y"])


@pytest.mark.parametrize("mode", [0, 3])
def test_attention_gqa_cache_bool_mask_causal_softcap(mode):
    """6 query heads on 2 KV heads, 7-wide keys and 5-wide values, 4 past rows, a mask broadcast over heads."""
    b, hq, hkv, lq, lkv, p, dk, dv = 2, 6, 2, 19, 9, 4, 7, 5
    feeds = {
        "q": _f(b, hq, lq, dk),
        "k": _f(b, hkv, lkv, dk),
        "v": _f(b, hkv, lkv, dv),
        "mask": RNG.random((b, 1, lq, p + lkv)) > 0.3,
        "past_k": _f(b, hkv, p, dk),
        "past_v": _f(b, hkv, p, dv),
    }
    outs = ["y", "present_k", "present_v", "qk"]
    node = helper.make_node(
        "Attention", list(feeds), outs, is_causal=1, softcap=1.5, qk_matmul_output_mode=mode, scale=0.3
    )
    _check(node, feeds, outs)


def test_attention_3d_float_mask_mqa():
    """3-D inputs, 4 query heads on one KV head, a float mask of rank 2."""
    b, lq, lkv, hq, dk, dv = 3, 5, 11, 4, 6, 3
    feeds = {"q": _f(b, lq, hq * dk), "k": _f(b, lkv, dk), "v": _f(b, lkv, dv), "mask": _f(lq, lkv)}
    node = helper.make_node("Attention", list(feeds), ["y"], q_num_heads=hq, kv_num_heads=1)
    _check(node, feeds, ["y"], threads=1)


@pytest.mark.parametrize("interleaved", [0, 1])
def test_rotary_embedding_3d_partial_dim(interleaved):
    b, s, h, d, rot, cache = 3, 130, 5, 18, 10, 160
    feeds = {
        "x": _f(b, s, h * d),
        "cos": _f(cache, rot // 2),
        "sin": _f(cache, rot // 2),
        "pos": RNG.integers(0, cache, (b, s)).astype(np.int64),
    }
    node = helper.make_node(
        "RotaryEmbedding", list(feeds), ["y"], num_heads=h, rotary_embedding_dim=rot, interleaved=interleaved
    )
    _check(node, feeds, ["y"])


def test_attention_with_a_too_wide_value_head_is_refused_by_name():
    feeds = {"q": _f(1, 1, 2, 4), "k": _f(1, 1, 3, 4), "v": _f(1, 1, 3, 1025)}
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in feeds.items()]
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    node = helper.make_node("Attention", list(feeds), ["y"], name="att")
    g = helper.make_graph([node], "wide", ins, [out])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)])
    with pytest.raises(burnedge.BurnedgeError, match=r"att.*Attention.*value head size of 1025"):
        burnedge.Session(burnedge.load(m), backend="c")


@pytest.mark.parametrize("rule", ["linear", "gated", "delta", "gated_delta"])
def test_linear_attention_gqa_with_past(rule):
    """6 query heads on 3 key/value heads, dk 5 and dv 7, 160 steps from a past state."""
    b, t, hq, hkv, dk, dv = 2, 160, 6, 3, 5, 7
    feeds = {
        "q": _f(b, t, hq * dk),
        "k": _f(b, t, hkv * dk) * 0.3,
        "v": _f(b, t, hkv * dv),
        "past": _f(b, hkv, dk, dv),
        "decay": -RNG.random((b, t, hkv * dk)).astype(np.float32),
        "beta": RNG.random((b, t, hkv)).astype(np.float32),
    }
    if "gated" not in rule:
        del feeds["decay"]
    if "delta" not in rule:
        del feeds["beta"]
    names = [n if n in feeds else "" for n in ("q", "k", "v", "past", "decay", "beta")]
    node = helper.make_node(
        "LinearAttention", names, ["y", "state"], q_num_heads=hq, kv_num_heads=hkv, update_rule=rule
    )
    _check(node, feeds, ["y", "state"], opset=27)


@pytest.mark.parametrize("activation", ["none", "silu"])
def test_causal_conv_with_state_long_rows(activation):
    b, c, n, k = 3, 19, 700, 5
    feeds = {"x": _f(b, c, n), "w": _f(c, 1, k), "bias": _f(c), "past": _f(b, c, k - 1)}
    node = helper.make_node("CausalConvWithState", list(feeds), ["y", "state"], activation=activation)
    _check(node, feeds, ["y", "state"], opset=27)


def test_attention_rows_follow_the_reference_on_nan_and_fully_masked_rows():
    """A fully masked query row gives zeros (not NaN); a NaN in Q makes only its own row NaN."""
    q, k, v = _f(1, 2, 3, 4), _f(1, 2, 5, 4), _f(1, 2, 5, 3)
    q[0, 1, 2, 0] = np.nan
    mask = np.ones((3, 5), bool)
    mask[1] = False
    feeds = {"q": q, "k": k, "v": v, "mask": mask}
    ins = [
        helper.make_tensor_value_info(n, TensorProto.BOOL if n == "mask" else TensorProto.FLOAT, a.shape)
        for n, a in feeds.items()
    ]
    g = helper.make_graph(
        [helper.make_node("Attention", list(feeds), ["y"])], "nan", ins, [helper.make_tensor_value_info("y", 1, None)]
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)])
    want = burnedge.Session(burnedge.load(m), backend="numpy").run(feeds)["y"]
    got = burnedge.Session(burnedge.load(m), backend="c").run(feeds)["y"]
    assert np.array_equal(np.isnan(got), np.isnan(want)) and np.isnan(got[0, 1, 2]).all()
    assert (got[:, :, 1] == 0).all()
    np.testing.assert_allclose(np.nan_to_num(got), np.nan_to_num(want), rtol=1e-4, atol=1e-6)
