"""CausalConvWithState lowering (opset 27): float32 x [B, C, N], depthwise weight [C, 1, K], optional bias [C] and
past_state [B, C, K - 1]; activation none, silu or swish (its alias)."""

from __future__ import annotations

import numpy as np

from ....ir import Node
from . import Ctx, lower
from .norm import _optional_out
from .reduce import attr


def _input(node: Node, i: int) -> str:
    return node.inputs[i] if len(node.inputs) > i else ""


@lower("CausalConvWithState")
def causal_conv_with_state(ctx: Ctx, node: Node) -> str:
    x, w = node.inputs[:2]
    bias, past = _input(node, 2), _input(node, 3)
    for name in (x, w, bias, past):
        if name:
            ctx.require(ctx.dtype(name) == np.float32, f"no C CausalConvWithState on {ctx.dtype(name)} (float32 only)")
    act = attr(node, "activation", "none")
    act = act.decode() if isinstance(act, bytes) else act
    ctx.require(act in ("none", "silu", "swish"), f"unknown activation {act!r}")
    xs, ws = ctx.shape(x), ctx.shape(w)
    ctx.require(len(xs) == 3, f"a {len(xs)}-D input (expected [B, C, N])")
    b, c, n = xs
    ctx.require(len(ws) == 3 and ws[0] == c and ws[1] == 1, f"weight of shape {list(ws)}, not [{c}, 1, K]")
    k = ws[2]
    ctx.require(k >= 1, "a kernel of size 0")
    if bias:
        ctx.require(ctx.size(bias) == c, f"bias has {ctx.size(bias)} values, not {c}")
    if past:
        ctx.require(ctx.shape(past) == (b, c, k - 1), f"past_state of shape {list(ctx.shape(past))}")
    if ctx.size(x) == 0 and (k == 1 or b * c == 0):
        return "/* empty */"
    present = _optional_out(ctx, node, 1) if k > 1 else "NULL"
    return (
        f"be_causal_conv_f32({ctx.tensor(x)}, {ctx.tensor(w)}, {ctx.tensor(bias) if bias else 'NULL'}, "
        f"{ctx.tensor(past) if past else 'NULL'}, {ctx.tensor(node.outputs[0])}, {present}, {b}, {c}, {n}, {k}, "
        f"{int(act != 'none')}, threads);"
    )
