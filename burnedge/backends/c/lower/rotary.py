"""RotaryEmbedding lowering (opset 23): 3-D (B, S, H*D) or 4-D (B, H, S, D) float32 input, read in place through
strides; caches indexed by position_ids (int64, (B, S)) or given per (batch, position)."""

from __future__ import annotations

import numpy as np

from ....ir import Node
from . import Ctx, lower
from .reduce import attr


@lower("RotaryEmbedding")
def rotary_embedding(ctx: Ctx, node: Node) -> str:
    x, cos_c, sin_c = node.inputs[:3]
    pos = node.inputs[3] if len(node.inputs) > 3 else ""
    for name in (x, cos_c, sin_c):
        ctx.require(ctx.dtype(name) == np.float32, f"no C RotaryEmbedding on {ctx.dtype(name)} (float32 only)")
    shape = ctx.shape(x)
    ctx.require(len(shape) in (3, 4), f"a {len(shape)}-D input (expected 3-D or 4-D)")
    if len(shape) == 3:
        b, s, hidden = shape
        h = int(attr(node, "num_heads", 0) or 0)
        ctx.require(h > 0 and hidden % h == 0, f"a 3-D input needs num_heads dividing {hidden}")
        d = hidden // h
        s_b, s_s, s_h = s * hidden, hidden, d
    else:
        b, h, s, d = shape
        s_b, s_s, s_h = h * s * d, d, s * d
    rot = int(attr(node, "rotary_embedding_dim", 0) or 0) or d
    ctx.require(rot % 2 == 0 and rot <= d, f"rotary_embedding_dim {rot} must be even and at most {d}")
    cs = ctx.shape(cos_c)
    ctx.require(ctx.shape(sin_c) == cs and cs[-1] == rot // 2, f"the caches' last dimension must be {rot // 2}")
    if pos:
        ctx.require(ctx.dtype(pos) == np.int64, f"position_ids is {ctx.dtype(pos)}, not int64")
        ctx.require(ctx.shape(pos) == (b, s), f"position_ids of shape {list(ctx.shape(pos))}, not {[b, s]}")
        ctx.require(len(cs) == 2, f"caches of rank {len(cs)} with position_ids (expected 2)")
    else:
        ctx.require(tuple(cs) == (b, s, rot // 2), f"caches of shape {list(cs)}, not {[b, s, rot // 2]}")
    if ctx.size(x) == 0:
        return "/* empty */"
    pos_ptr, rows = (ctx.tensor(pos), cs[0]) if pos else ("NULL", b * s)
    return (
        f"be_rotary_f32({ctx.tensor(x)}, {ctx.tensor(cos_c)}, {ctx.tensor(sin_c)}, {pos_ptr}, {rows}, "
        f"{ctx.tensor(node.outputs[0])}, {b}, {s}, {h}, {d}, {rot}, {s_b}, {s_s}, {s_h}, "
        f"{int(bool(attr(node, 'interleaved', 0)))}, threads);"
    )
