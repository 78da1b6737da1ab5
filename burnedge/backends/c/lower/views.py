"""Views (the ops tagged "view": Reshape, Flatten, Squeeze, Unsqueeze, Identity, inference Dropout): no code when the
planner gave the output the input's bytes; a copy otherwise (a constant input, or an output that must outlive its
input)."""

from __future__ import annotations

from ....ir import Node
from ....ops import tagged
from . import Ctx, lower


@lower(*sorted(tagged("view")))
def view(ctx: Ctx, node: Node) -> str:
    src, dst = node.inputs[0], node.outputs[0]
    ctx.require(len([o for o in node.outputs if o]) == 1, "only the data output of Dropout is supported")
    if ctx.plan.offsets.get(src) == ctx.plan.offsets.get(dst) and src in ctx.plan.offsets:
        return "/* view: shares its input's bytes */"
    nbytes = ctx.graph.values[dst].nbytes
    return f"memcpy({ctx.tensor(dst, 'uint8_t')}, {ctx.tensor(src, 'uint8_t')}, {nbytes});"
