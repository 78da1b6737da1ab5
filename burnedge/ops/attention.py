"""Attention ops: Attention, RotaryEmbedding, FlexAttention, LinearAttention and CausalConvWithState.

Attention opsets 23 and 24 (24 adds ``nonpad_kv_seqlen``, and lets a mask shorter than the key sequence be padded
with -inf); RotaryEmbedding opset 23; FlexAttention opset 1 of the ``ai.onnx.preview`` domain (score_mod / prob_mod
subgraphs); LinearAttention and CausalConvWithState opset 27.

Attention covers MHA / GQA / MQA and the KV cache. Scores are computed in float32 (float64 for float64 inputs) and
results cast to the query's dtype; grouped query heads share their K/V head without copying it (a reshape of Q to
(B, H_kv, group, L, D)). A softmax row that every position masks out gives zeros instead of NaN.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from . import register
from ._common import sum_dtype


def _work(dtype):
    """Attention computes in float64 for every float type (SUM_DTYPE in _common: its products and softmax sums
    round once)."""
    return sum_dtype().type


def _to_4d(x, heads):
    """(B, S, H*D) -> (B, H, S, D)."""
    b, s, hd = x.shape
    if heads is None or heads <= 0 or hd % heads:
        raise ValueError(f"a 3-D input of shape {list(x.shape)} needs a head count that divides {hd}")
    return x.reshape(b, s, heads, hd // heads).transpose(0, 2, 1, 3)


def _softmax(x):
    m = np.max(x, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(x - m)
    s = e.sum(axis=-1, keepdims=True)
    return e / np.where(s == 0, 1, s)


def _grouped_matmul(a, b):
    """a (B, Hq, L, X) @ b (B, Hkv, X, Y) with query head h reading kv head h // (Hq // Hkv)."""
    bq, hq, lq, _ = a.shape
    hkv = b.shape[1]
    if hq == hkv:
        return a @ b
    if hkv == 0 or hq % hkv:
        raise ValueError(f"{hq} query heads cannot share {hkv} key/value heads")
    g = a.reshape(bq, hkv, hq // hkv, lq, a.shape[-1]) @ b[:, :, None]
    return g.reshape(bq, hq, lq, b.shape[-1])


def _attention(
    q,
    k,
    v,
    mask,
    past_k,
    past_v,
    nonpad,
    *,
    scale,
    is_causal,
    q_num_heads,
    kv_num_heads,
    softmax_precision,
    softcap,
    qk_matmul_output_mode,
):
    three_d = q.ndim == 3
    if three_d:
        q, k, v = _to_4d(q, q_num_heads), _to_4d(k, kv_num_heads), _to_4d(v, kv_num_heads)
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError("Q, K and V must all be 3-D or all be 4-D")
    present_k = np.concatenate([past_k, k], axis=2) if past_k is not None else k.copy()
    present_v = np.concatenate([past_v, v], axis=2) if past_v is not None else v.copy()
    work = _work(q.dtype)
    lq, total = q.shape[2], present_k.shape[2]
    past = past_k.shape[2] if past_k is not None else 0
    if scale is None:
        scale = 1.0 / np.sqrt(q.shape[3])
    root = np.sqrt(scale)
    qs = q.astype(work) * work(root)
    ks = present_k.astype(work) * work(root)
    scores = _grouped_matmul(qs, ks.transpose(0, 1, 3, 2))
    raw = scores
    if softcap and softcap > 0:
        scores = work(softcap) * np.tanh(scores / work(softcap))
    bias = np.zeros((lq, total), work)
    if mask is not None:
        if mask.shape[-1] < total:
            pad = [(0, 0)] * (mask.ndim - 1) + [(0, total - mask.shape[-1])]
            mask = np.pad(mask, pad, constant_values=False if mask.dtype == np.bool_ else -np.inf)
        bias = bias + (np.where(mask, 0, -np.inf).astype(work) if mask.dtype == np.bool_ else mask.astype(work))
    if is_causal:
        i = np.arange(lq)[:, None]
        j = np.arange(total)[None, :]
        bias = bias + np.where(j > i + past, -np.inf, 0).astype(work)
    if nonpad is not None:
        keep = np.arange(total)[None, :] < np.asarray(nonpad).reshape(-1, 1)
        bias = bias + np.where(keep, 0, -np.inf).astype(work)[:, None, None, :]
    biased = scores + bias
    sm_in = biased if softmax_precision is None else biased.astype(dtypes.from_onnx(softmax_precision))
    probs = _softmax(sm_in)
    y = _grouped_matmul(probs.astype(work, copy=False), present_v.astype(work)).astype(q.dtype)
    qk = {0: raw, 1: scores, 2: biased, 3: probs}.get(qk_matmul_output_mode)
    if qk is None:
        raise ValueError(f"qk_matmul_output_mode must be 0..3, not {qk_matmul_output_mode}")
    qk = np.broadcast_to(qk, scores.shape).astype(q.dtype)
    if three_d:
        y = y.transpose(0, 2, 1, 3).reshape(y.shape[0], y.shape[2], -1)
    return y, present_k, present_v, qk


@register("Attention", since=23)
def attention_23(
    q,
    k,
    v,
    attn_mask=None,
    past_key=None,
    past_value=None,
    *,
    is_causal=0,
    kv_num_heads=None,
    q_num_heads=None,
    qk_matmul_output_mode=0,
    scale=None,
    softcap=0.0,
    softmax_precision=None,
):
    """Opset 23: Y, present_key, present_value, qk_matmul_output."""
    return _attention(
        q,
        k,
        v,
        attn_mask,
        past_key,
        past_value,
        None,
        scale=scale,
        is_causal=is_causal,
        q_num_heads=q_num_heads,
        kv_num_heads=kv_num_heads,
        softmax_precision=softmax_precision,
        softcap=softcap,
        qk_matmul_output_mode=qk_matmul_output_mode,
    )


@register("Attention", since=24)
def attention_24(
    q,
    k,
    v,
    attn_mask=None,
    past_key=None,
    past_value=None,
    nonpad_kv_seqlen=None,
    *,
    is_causal=0,
    kv_num_heads=None,
    q_num_heads=None,
    qk_matmul_output_mode=0,
    scale=None,
    softcap=0.0,
    softmax_precision=None,
):
    """Opset 24: adds nonpad_kv_seqlen (per-batch count of valid key/value positions)."""
    return _attention(
        q,
        k,
        v,
        attn_mask,
        past_key,
        past_value,
        nonpad_kv_seqlen,
        scale=scale,
        is_causal=is_causal,
        q_num_heads=q_num_heads,
        kv_num_heads=kv_num_heads,
        softmax_precision=softmax_precision,
        softcap=softcap,
        qk_matmul_output_mode=qk_matmul_output_mode,
    )


@register("RotaryEmbedding", since=23)
def rotary_embedding(x, cos_cache, sin_cache, position_ids=None, *, interleaved=0, num_heads=0, rotary_embedding_dim=0):
    """Opset 23: rotates the first rotary_embedding_dim features of each head (halves, or even/odd pairs)."""
    if x.ndim == 3:
        b, s, hidden = x.shape
        if not num_heads or hidden % num_heads:
            raise ValueError("a 3-D input needs num_heads dividing its hidden size")
        xs = x.reshape(b, s, num_heads, hidden // num_heads)  # (B, S, H, D)
        seq_axis_first = True
    elif x.ndim == 4:
        xs = x  # (B, H, S, D)
        seq_axis_first = False
    else:
        raise ValueError(f"input must be 3-D or 4-D, not {x.ndim}-D")
    d = xs.shape[-1]
    r = rotary_embedding_dim or d
    if position_ids is not None:
        cos, sin = cos_cache[position_ids], sin_cache[position_ids]  # (B, S, R/2)
    else:
        cos, sin = cos_cache, sin_cache
    if cos.shape[-1] != r // 2 or sin.shape[-1] != r // 2:
        raise ValueError(f"the caches' last dimension must be rotary_embedding_dim / 2 = {r // 2}")
    cos = cos[:, :, None, :] if seq_axis_first else cos[:, None, :, :]
    sin = sin[:, :, None, :] if seq_axis_first else sin[:, None, :, :]
    if interleaved:
        x1, x2 = xs[..., 0:r:2], xs[..., 1:r:2]
    else:
        x1, x2 = xs[..., : r // 2], xs[..., r // 2 : r]
    out = xs.copy()
    re = (cos * x1 - sin * x2).astype(x.dtype)
    im = (sin * x1 + cos * x2).astype(x.dtype)
    if interleaved:
        out[..., 0:r:2], out[..., 1:r:2] = re, im
    else:
        out[..., : r // 2], out[..., r // 2 : r] = re, im
    return out.reshape(x.shape)


@register("FlexAttention", since=1, domain="ai.onnx.preview")
def flex_attention(q, k, v, *, prob_mod=None, scale=None, score_mod=None, softmax_precision=None, _run):
    """ai.onnx.preview opset 1: softmax((Q K^T) * scale, with score_mod) -> prob_mod -> @ V, for 4-D inputs."""
    if softmax_precision is not None:
        work = dtypes.from_onnx(softmax_precision)
    else:
        work = np.dtype(np.float64 if q.dtype == np.float64 else np.float32)
    if scale is None:
        scale = 1.0 / np.sqrt(q.shape[3])
    scores = _grouped_matmul(q.astype(work), k.astype(work).transpose(0, 1, 3, 2)) * work.type(scale)
    if score_mod is not None:
        scores = np.asarray(_run(score_mod, scores)[0]).astype(work, copy=False)
    probs = _softmax(scores)
    if prob_mod is not None:
        probs = np.asarray(_run(prob_mod, probs)[0]).astype(work, copy=False)
    return _grouped_matmul(probs, v.astype(work)).astype(q.dtype)


def _heads_time(x, heads, width=None):
    """(B, T, H*D) -> (B, H, T, D) float32; `width` forces D (a per-head scalar is D = 1)."""
    b, t, hd = x.shape
    d = width if width is not None else hd // heads
    if heads * d != hd:
        raise ValueError(f"last dimension {hd} does not split into {heads} heads")
    return x.reshape(b, t, heads, d).transpose(0, 2, 1, 3).astype(np.float32)


@register("LinearAttention", since=27)
def linear_attention(
    query,
    key,
    value,
    past_state=None,
    decay=None,
    beta=None,
    *,
    chunk_size=64,
    kv_num_heads,
    q_num_heads,
    scale=0.0,
    update_rule="gated_delta",
):
    """Opset 27: linear / gated / delta / gated_delta recurrences over time with a (B, H_kv, d_k, d_v) state.

    Runs the recurrence token by token in float32 (chunk_size is only a tuning hint); returns output and
    present_state.
    """
    if update_rule not in ("linear", "gated", "delta", "gated_delta"):
        raise ValueError(f"unknown update_rule {update_rule!r}")
    if q_num_heads <= 0 or kv_num_heads <= 0 or q_num_heads % kv_num_heads:
        raise ValueError(f"q_num_heads {q_num_heads} must be a positive multiple of kv_num_heads {kv_num_heads}")
    gated, delta = update_rule in ("gated", "gated_delta"), update_rule in ("delta", "gated_delta")
    if gated and decay is None:
        raise ValueError(f"update_rule {update_rule!r} needs the decay input")
    if delta and beta is None:
        raise ValueError(f"update_rule {update_rule!r} needs the beta input")
    b, t, _ = query.shape
    d_k = query.shape[-1] // q_num_heads
    d_v = value.shape[-1] // kv_num_heads
    group = q_num_heads // kv_num_heads
    q = _heads_time(query, q_num_heads).reshape(b, kv_num_heads, group, t, d_k)
    k = _heads_time(key, kv_num_heads)
    v = _heads_time(value, kv_num_heads)
    g = None
    if gated:
        g = np.exp(_heads_time(decay, kv_num_heads, 1 if decay.shape[-1] == kv_num_heads else None))
    bt = _heads_time(beta, beta.shape[-1], 1) if delta else None  # (B, H_kv or 1, T, 1)
    state_dtype = past_state.dtype if past_state is not None else query.dtype
    if past_state is not None:
        state = past_state.astype(np.float32)
    else:
        state = np.zeros((b, kv_num_heads, d_k, d_v), np.float32)
    sc = np.float32(scale if scale else 1.0 / np.sqrt(d_k))
    out = np.empty((b, kv_num_heads, group, t, d_v), np.float32)
    for i in range(t):
        if gated:
            state = state * g[:, :, i, :, None]
        vt = v[:, :, i, :]
        kt = k[:, :, i, :]
        if delta:
            vt = bt[:, :, i, :] * (vt - np.einsum("bhkv,bhk->bhv", state, kt))
        state = state + kt[..., :, None] * vt[..., None, :]
        out[:, :, :, i, :] = sc * np.einsum("bhgk,bhkv->bhgv", q[:, :, :, i, :], state)
    output = out.reshape(b, q_num_heads, t, d_v).transpose(0, 2, 1, 3).reshape(b, t, q_num_heads * d_v)
    return output.astype(query.dtype), state.astype(state_dtype)


@register("CausalConvWithState", since=27)
def causal_conv_with_state(x, weight, bias=None, past_state=None, *, activation="none"):
    """Opset 27: depthwise causal 1-D conv over [past_state | x]; returns output and the last k - 1 positions."""
    if activation not in ("none", "silu", "swish"):
        raise ValueError(f"unknown activation {activation!r}")
    b, c, n = x.shape
    kw = weight.shape[2]
    pad = past_state if past_state is not None else np.zeros((b, c, kw - 1), x.dtype)
    padded = np.concatenate([pad.astype(x.dtype), x], axis=2)
    work = _work(x.dtype)
    windows = np.lib.stride_tricks.sliding_window_view(padded.astype(work), kw, axis=2)  # (B, C, N, k)
    y = np.einsum("bcnk,ck->bcn", windows, weight[:, 0, :].astype(work))
    if bias is not None:
        y = y + bias.astype(work)[None, :, None]
    y = y.astype(x.dtype)
    if activation != "none":
        y32 = y.astype(np.float32)
        y = (y32 / (1 + np.exp(-y32))).astype(x.dtype)
    return y, padded[:, :, padded.shape[2] - (kw - 1) :].copy()
