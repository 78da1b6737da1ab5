"""LinearAttention lowering (opset 27): float32 (B, T, H*D) inputs; the recurrence runs in the present_state
output, which starts as past_state (copied) or zeros. Refused: other dtypes, a dropped present_state output, a
value head wider than BE_LINATT_MAX_DV."""

from __future__ import annotations

import math

import numpy as np

from ....ir import Node
from . import Ctx, lower
from .reduce import attr, flit

MAX_DV = 1024  # BE_LINATT_MAX_DV of kernels/linear_attention.h


def _input(node: Node, i: int) -> str:
    return node.inputs[i] if len(node.inputs) > i else ""


@lower("LinearAttention")
def linear_attention(ctx: Ctx, node: Node) -> str:
    q, k, v = node.inputs[:3]
    past, decay, beta = _input(node, 3), _input(node, 4), _input(node, 5)
    for name in (q, k, v, past, decay, beta):
        if name:
            ctx.require(ctx.dtype(name) == np.float32, f"no C LinearAttention on {ctx.dtype(name)} (float32 only)")
    rule = attr(node, "update_rule", "gated_delta")
    rule = rule.decode() if isinstance(rule, bytes) else rule
    ctx.require(rule in ("linear", "gated", "delta", "gated_delta"), f"unknown update_rule {rule!r}")
    gated, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    ctx.require(not gated or bool(decay), f"update_rule {rule!r} needs the decay input")
    ctx.require(not delta or bool(beta), f"update_rule {rule!r} needs the beta input")
    hq, hkv = int(attr(node, "q_num_heads")), int(attr(node, "kv_num_heads"))
    ctx.require(hq > 0 and hkv > 0 and hq % hkv == 0, f"q_num_heads {hq} is not a multiple of kv_num_heads {hkv}")
    (b, t, qw), kw, vw = ctx.shape(q), ctx.shape(k)[2], ctx.shape(v)[2]
    ctx.require(qw % hq == 0 and kw % hkv == 0 and vw % hkv == 0, "head counts do not divide the hidden sizes")
    dk, dv = qw // hq, vw // hkv
    ctx.require(kw // hkv == dk, f"key head size {kw // hkv} differs from the query's {dk}")
    ctx.require(dv <= MAX_DV, f"a value head size of {dv} (at most {MAX_DV})")
    if past:
        got = ctx.shape(past)
        ctx.require(got == (b, hkv, dk, dv), f"past_state has shape {list(got)}, not {[b, hkv, dk, dv]}")
    for name in (k, v, decay, beta):
        if name:
            ctx.require(ctx.shape(name)[:2] == (b, t), f"{name} does not start with [{b}, {t}]")
    state = node.outputs[1] if len(node.outputs) > 1 else ""
    ctx.require(bool(state) and state in ctx.plan.offsets, "the present_state output is dropped")
    per_head = 0
    if gated:
        dw = ctx.shape(decay)[-1]
        ctx.require(dw in (hkv, hkv * dk), f"decay's last dimension is {dw}, not {hkv} or {hkv * dk}")
        per_head = int(dw == hkv and dk != 1)
    beta_heads = ctx.shape(beta)[-1] if delta else 1
    ctx.require(beta_heads in (1, hkv), f"beta's last dimension is {beta_heads}, not 1 or {hkv}")
    scale = float(attr(node, "scale", 0.0) or 0.0) or 1.0 / math.sqrt(dk)
    n = b * hkv * dk * dv
    init = (
        f"memmove({ctx.tensor(state)}, {ctx.tensor(past)}, {n * 4});"
        if past
        else f"memset({ctx.tensor(state)}, 0, {n * 4});"
    )
    return (
        f"{init}\nbe_linear_attention_f32({ctx.tensor(q)}, {ctx.tensor(k)}, {ctx.tensor(v)}, "
        f"{ctx.tensor(decay) if gated else 'NULL'}, {per_head}, {ctx.tensor(beta) if delta else 'NULL'}, "
        f"{beta_heads}, {ctx.tensor(state)}, {ctx.tensor(node.outputs[0])}, {b}, {t}, {hq}, {hkv}, {dk}, {dv}, "
        f"{flit(scale)}, threads);"
    )
