"""Attention lowering (opsets 23 and 24): one be_attention_f32 call (kernels/attention.h) for float32 models.

3-D inputs (B, S, H*D) and 4-D inputs (B, H, S, D) differ only in their strides, so the kernel reads both in place;
past_key / past_value ([B, Hkv, P, D]) are read ahead of the current keys, and the present outputs are the two
concatenated. The mask (float or bool, rank 2..4) is described by broadcast strides over (B, Hq, Lq) and its row
length: columns past it count as masked, as opset 24 pads them. Refused: other dtypes (float16 models run on the
numpy backend), a value head wider than BE_ATTENTION_MAX_DV.
"""

from __future__ import annotations

import math

import numpy as np

from ....ir import Node
from . import Ctx, lower
from .norm import _optional_out
from .reduce import attr, flit

MAX_DV = 1024  # BE_ATTENTION_MAX_DV of kernels/attention.h


def _input(node: Node, i: int) -> str:
    return node.inputs[i] if len(node.inputs) > i else ""


def _strides(shape: tuple[int, ...], heads: int) -> tuple[int, int, int, int, int]:
    """(heads, head size, batch, head, row strides) of a 3-D (B, S, H*D) or 4-D (B, H, S, D) input."""
    if len(shape) == 3:
        d = shape[2] // heads
        return heads, d, shape[1] * shape[2], d, shape[2]
    return shape[1], shape[3], shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3]


def _mask(ctx: Ctx, name: str, b: int, hq: int, lq: int, total: int) -> tuple[str, str, tuple[int, ...]]:
    """(float pointer, bool pointer, (batch, head, row strides, row length)) of the attention mask."""
    if not name:
        return "NULL", "NULL", (0, 0, 0, total)
    shape = ctx.shape(name)
    ctx.require(2 <= len(shape) <= 4, f"a mask of rank {len(shape)} (expected 2..4)")
    dims = (1,) * (4 - len(shape)) + tuple(shape)
    for got, want, what in zip(dims[:3], (b, hq, lq), ("batch", "head", "query"), strict=True):
        ctx.require(got in (1, want), f"the mask's {what} dimension is {got}, not 1 or {want}")
    ctx.require(dims[3] <= total, f"the mask's rows have {dims[3]} columns, more than the {total} keys")
    m_s = dims[3] if dims[2] > 1 else 0
    m_h = dims[2] * dims[3] if dims[1] > 1 else 0
    m_b = dims[1] * dims[2] * dims[3] if dims[0] > 1 else 0
    dt = ctx.dtype(name)
    ctx.require(dt in (np.float32, np.bool_), f"a {dt} mask (expected float32 or bool)")
    ptr = ctx.tensor(name)
    mf, mb = (ptr, "NULL") if dt == np.float32 else ("NULL", ptr)
    return mf, mb, (m_b, m_h, m_s, dims[3])


@lower("Attention")
def attention(ctx: Ctx, node: Node) -> str:
    q, k, v = node.inputs[:3]
    for name in (q, k, v):
        ctx.require(ctx.dtype(name) == np.float32, f"no C Attention on {ctx.dtype(name)} (float32 only)")
    qs, ks, vs = ctx.shape(q), ctx.shape(k), ctx.shape(v)
    ctx.require(len(qs) == len(ks) == len(vs) and len(qs) in (3, 4), "Q, K and V must all be 3-D or all 4-D")
    three = len(qs) == 3
    if three:
        qh, kh = int(attr(node, "q_num_heads", 0) or 0), int(attr(node, "kv_num_heads", 0) or 0)
        ctx.require(qh > 0 and kh > 0, "3-D inputs need q_num_heads and kv_num_heads")
        ctx.require(qs[2] % qh == 0 and ks[2] % kh == 0 and vs[2] % kh == 0, "head counts do not divide hidden sizes")
    else:
        qh, kh = qs[1], ks[1]
    hq, dk, q_b, q_h, q_s = _strides(qs, qh)
    hkv, dk2, k_b, k_h, k_s = _strides(ks, kh)
    _, dv, v_b, v_h, v_s = _strides(vs, kh)
    bsz, lq, lkv = qs[0], qs[-2 if not three else 1], ks[-2 if not three else 1]
    ctx.require(dk == dk2, f"Q's head size {dk} differs from K's {dk2}")
    ctx.require(hkv > 0 and hq % hkv == 0, f"{hq} query heads cannot share {hkv} key/value heads")
    ctx.require(dv <= MAX_DV, f"a value head size of {dv} (at most {MAX_DV})")
    past_k, past_v = _input(node, 4), _input(node, 5)
    ctx.require(bool(past_k) == bool(past_v), "past_key without past_value (or the reverse)")
    p = ctx.shape(past_k)[2] if past_k and len(ctx.shape(past_k)) == 4 else 0
    for name, d in ((past_k, dk), (past_v, dv)):
        if name:
            got = ctx.shape(name)
            ctx.require(got == (bsz, hkv, p, d), f"{name} has shape {list(got)}, not {[bsz, hkv, p, d]}")
            ctx.require(ctx.dtype(name) == np.float32, f"{name} is {ctx.dtype(name)}, not float32")
    total = p + lkv
    mf, mb, (m_b, m_h, m_s, m_len) = _mask(ctx, _input(node, 3), bsz, hq, lq, total)
    nonpad = _input(node, 6)
    if nonpad:
        ctx.require(ctx.dtype(nonpad) == np.int64, f"nonpad_kv_seqlen is {ctx.dtype(nonpad)}, not int64")
        ctx.require(ctx.size(nonpad) == bsz, f"nonpad_kv_seqlen has {ctx.size(nonpad)} values, not {bsz}")
    mode = int(attr(node, "qk_matmul_output_mode", 0) or 0)
    ctx.require(0 <= mode <= 3, f"qk_matmul_output_mode must be 0..3, not {mode}")
    scale = attr(node, "scale", None)
    scale = 1.0 / math.sqrt(dk) if scale is None else float(scale)
    y_b, y_h, y_s = (lq * hq * dv, dv, hq * dv) if three else (hq * lq * dv, lq * dv, dv)
    if ctx.size(node.outputs[0]) == 0:
        return "/* empty */"
    cfg = (
        f"&(be_attention_cfg){{.B = {bsz}, .Hq = {hq}, .Hkv = {hkv}, .Lq = {lq}, .Lkv = {lkv}, .P = {p}, "
        f".Dk = {dk}, .Dv = {dv}, .q_b = {q_b}, .q_h = {q_h}, .q_s = {q_s}, .k_b = {k_b}, .k_h = {k_h}, "
        f".k_s = {k_s}, .v_b = {v_b}, .v_h = {v_h}, .v_s = {v_s}, .y_b = {y_b}, .y_h = {y_h}, .y_s = {y_s}, "
        f".m_b = {m_b}, .m_h = {m_h}, .m_s = {m_s}, .m_len = {m_len}, .scale = {flit(scale)}, "
        f".softcap = {flit(float(attr(node, 'softcap', 0.0) or 0.0))}, "
        f".causal = {int(bool(attr(node, 'is_causal', 0)))}, .qk_mode = {mode}}}"
    )
    opt = [ctx.tensor(n) if n else "NULL" for n in (past_k, past_v, nonpad)]
    outs = [_optional_out(ctx, node, i) for i in (1, 2, 3)]
    return (
        f"be_attention_f32({cfg},\n  {ctx.tensor(q)}, {ctx.tensor(k)}, {ctx.tensor(v)}, {opt[0]}, {opt[1]}, "
        f"{mf}, {mb}, {opt[2]}, {ctx.tensor(node.outputs[0])}, {outs[0]}, {outs[1]}, {outs[2]}, threads);"
    )
