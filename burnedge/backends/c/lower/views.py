"""Views (the ops tagged "view": Reshape, Flatten, Squeeze, Unsqueeze, Identity; Dropout in dropout.py) and BitCast:
no code when the planner gave the output the input's bytes; a copy otherwise (a constant input, or an output that
must outlive its input). BitCast is never given its input's bytes (it is no view to the planner): it is a copy of
the bytes, whose type the output's dtype reinterprets, as the reference's numpy view does."""

from __future__ import annotations

from ....ir import Node
from ....ops import tagged
from . import Ctx, lower


def share_or_copy(ctx: Ctx, src: str, dst: str) -> str:
    """The C giving `dst` the bytes of `src`: nothing when the planner placed them at one offset, else a copy."""
    if ctx.plan.offsets.get(src) == ctx.plan.offsets.get(dst) and src in ctx.plan.offsets:
        return "/* view: shares its input's bytes */"
    nbytes = ctx.graph.values[dst].nbytes
    return f"memcpy({ctx.tensor(dst, 'uint8_t')}, {ctx.tensor(src, 'uint8_t')}, {nbytes});"


@lower(*sorted(tagged("view") - {"Dropout"}))
def view(ctx: Ctx, node: Node) -> str:
    return share_or_copy(ctx, node.inputs[0], node.outputs[0])


@lower("BitCast")
def bit_cast(ctx: Ctx, node: Node) -> str:
    src, dst = node.inputs[0], node.outputs[0]
    a, b = ctx.dtype(src), ctx.dtype(dst)
    ctx.require(a.itemsize == b.itemsize, f"BitCast from {a} to {b} changes the element size")
    return share_or_copy(ctx, src, dst)
