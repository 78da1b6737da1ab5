"""Attention in torch (the registry's attention.py, opsets 23 and 24): MHA / GQA / MQA, 3-D or 4-D inputs, the KV
cache (past and present keys and values), boolean or additive masks (a short one padded), is_causal, softcap,
nonpad_kv_seqlen and the four qk_matmul_output modes. Scores are computed in float32 (float64 for float64
inputs); a softmax row that every position masks out gives zeros, as the reference does."""

from __future__ import annotations

import math

import torch

from .registry import Call, op


def _to_4d(x, heads):
    b, s, hd = x.shape
    if not heads or hd % heads:
        raise ValueError(f"a 3-D input of shape {list(x.shape)} needs a head count that divides {hd}")
    return x.reshape(b, s, heads, hd // heads).transpose(1, 2)


def _grouped(a, b):
    """a (B, Hq, L, X) @ b (B, Hkv, X, Y): query head h reads kv head h // (Hq // Hkv)."""
    hq, hkv = a.shape[1], b.shape[1]
    if hq == hkv:
        return a @ b
    if hkv == 0 or hq % hkv:
        raise ValueError(f"{hq} query heads cannot share {hkv} key/value heads")
    return a @ b.repeat_interleave(hq // hkv, dim=1)


def _softmax(x):
    m = x.amax(-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(x - m)
    s = e.sum(-1, keepdim=True)
    return e / torch.where(s == 0, torch.ones_like(s), s)


@op("Attention")
def attention(c: Call, q, k, v, mask=None, past_k=None, past_v=None, nonpad=None):
    three_d = q.dim() == 3
    if three_d:
        q, k, v = _to_4d(q, c.attr("q_num_heads")), _to_4d(k, c.attr("kv_num_heads")), _to_4d(v, c.attr("kv_num_heads"))
    present_k = torch.cat([past_k, k], 2) if past_k is not None else k
    present_v = torch.cat([past_v, v], 2) if past_v is not None else v
    work = torch.float64 if q.dtype == torch.float64 else torch.float32
    lq, total = q.shape[2], present_k.shape[2]
    past = past_k.shape[2] if past_k is not None else 0
    scale = c.attr("scale")
    scale = 1.0 / math.sqrt(q.shape[3]) if scale is None else scale
    root = math.sqrt(scale)
    scores = _grouped(q.to(work) * root, (present_k.to(work) * root).transpose(2, 3))
    raw = scores
    softcap = c.attr("softcap", 0.0)
    if softcap and softcap > 0:
        scores = softcap * torch.tanh(scores / softcap)
    bias = torch.zeros((lq, total), dtype=work, device=q.device)
    if mask is not None:
        if mask.shape[-1] < total:
            fill = False if mask.dtype == torch.bool else -math.inf
            pad = torch.full((*mask.shape[:-1], total - mask.shape[-1]), fill, dtype=mask.dtype, device=mask.device)
            mask = torch.cat([mask, pad], -1)
        if mask.dtype == torch.bool:
            mask = torch.where(mask, 0.0, -math.inf).to(work)
        bias = bias + mask.to(work)
    if c.attr("is_causal", 0):
        i = torch.arange(lq, device=q.device)[:, None]
        j = torch.arange(total, device=q.device)[None, :]
        bias = bias + torch.where(j > i + past, -math.inf, 0.0).to(work)
    if nonpad is not None:
        keep = torch.arange(total, device=q.device)[None, :] < nonpad.reshape(-1, 1)
        bias = bias + torch.where(keep, 0.0, -math.inf).to(work)[:, None, None, :]
    biased = scores + bias
    probs = _softmax(biased)
    y = _grouped(probs, present_v.to(work)).to(q.dtype)
    mode = c.attr("qk_matmul_output_mode", 0)
    qk = {0: raw, 1: scores, 2: biased, 3: probs}.get(mode)
    if qk is None:
        raise ValueError(f"qk_matmul_output_mode must be 0..3, not {mode}")
    qk = qk.expand(scores.shape).to(q.dtype)
    if three_d:
        y = y.transpose(1, 2).reshape(y.shape[0], y.shape[2], -1)
    return (y, present_k, present_v, qk)[: len(c.node.outputs)]


@op("RotaryEmbedding")
def rotary_embedding(c: Call, x, cos_cache, sin_cache, position_ids=None):
    """Rotates the first rotary_embedding_dim features of each head (halves, or even/odd pairs when interleaved)."""
    if x.dim() == 3:
        heads = c.attr("num_heads", 0)
        b, s, hidden = x.shape
        if not heads or hidden % heads:
            raise ValueError("a 3-D input needs num_heads dividing its hidden size")
        xs, seq_first = x.reshape(b, s, heads, hidden // heads), True  # (B, S, H, D)
    else:
        xs, seq_first = x, False  # (B, H, S, D)
    r = c.attr("rotary_embedding_dim", 0) or xs.shape[-1]
    if position_ids is not None:
        cos, sin = cos_cache[position_ids.long()], sin_cache[position_ids.long()]  # (B, S, R/2)
    else:
        cos, sin = cos_cache, sin_cache
    cos = cos[:, :, None, :] if seq_first else cos[:, None, :, :]
    sin = sin[:, :, None, :] if seq_first else sin[:, None, :, :]
    if c.attr("interleaved", 0):
        x1, x2 = xs[..., 0:r:2], xs[..., 1:r:2]
        re, im = (cos * x1 - sin * x2).to(x.dtype), (sin * x1 + cos * x2).to(x.dtype)
        rotated = torch.stack([re, im], -1).reshape(*xs.shape[:-1], r)
    else:
        x1, x2 = xs[..., : r // 2], xs[..., r // 2 : r]
        rotated = torch.cat([(cos * x1 - sin * x2).to(x.dtype), (sin * x1 + cos * x2).to(x.dtype)], -1)
    return torch.cat([rotated, xs[..., r:]], -1).reshape(x.shape)
