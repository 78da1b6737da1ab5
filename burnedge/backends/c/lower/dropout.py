"""Dropout: a view in inference (its mask all ones), the reference's seeded mask in training mode.

Inference (before opset 12, or a training_mode that is absent or a constant false, or a constant ratio of 0): the
output is the input (shared bytes or a copy, views.py) and the optional mask is all ones (bool from opset 10, the
data's type before). Training mode with a `seed`: the reference draws its mask from numpy's legacy generator seeded
with it, uniform on [0, 1), keeping the elements whose draw is >= ratio. With the static shape those draws are
fixed, so they are computed here once and stored with the weights; the ratio and training_mode may still arrive at
run time, read by the step. Training mode without a seed draws a fresh mask every run: no kernel can give the
reference's values, so it is rejected.
"""

from __future__ import annotations

import numpy as np

from ....ir import Node
from . import Ctx, ctype, lower
from .views import share_or_copy


def _flag(ctx: Ctx, node: Node, k: int) -> np.ndarray | None:
    """The constant value of optional input k (None when it arrives at run time), an empty array when absent."""
    name = node.inputs[k] if len(node.inputs) > k else ""
    if not name:
        return np.zeros(0)
    value = ctx.const(name)
    return None if value is None else np.asarray(value).reshape(-1)


def _ones(ctx: Ctx, mask: str) -> str:
    n, ct = ctx.size(mask), ctype(ctx.dtype(mask))
    return f"{{ {ct} *m = {ctx.tensor(mask)}; for (long i = 0; i < {n}; i++) m[i] = ({ct})1; }}"


@lower("Dropout")
def dropout(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    mask = node.outputs[1] if len(node.outputs) > 1 else ""
    ratio, training = _flag(ctx, node, 1), _flag(ctx, node, 2)
    const_off = (training is not None and not (training.size and training[0])) or (
        ratio is not None and ratio.size and float(ratio[0]) == 0.0
    )
    if node.op.since < 12 or const_off:
        return "\n".join([share_or_copy(ctx, x, y), *([_ones(ctx, mask)] if mask else [])])
    seed = node.attrs.get("seed")
    ctx.require(seed is not None, "training mode without a seed draws a new random mask each run (no fixed result)")
    ctx.require(ctx.dtype(x) == np.float32, f"no C training-mode Dropout on {ctx.dtype(x)} (float32 only)")
    n = ctx.size(x)
    draws = ctx.pack(f"dropout:{node.name}", np.random.RandomState(int(seed)).random_sample(ctx.shape(x)))
    r = f"(double){ctx.tensor(node.inputs[1])}[0]" if ratio is None else repr(float(ratio[0]) if ratio.size else 0.5)
    t = f"{ctx.tensor(node.inputs[2])}[0]" if training is None else "1"
    lines = [
        "{",
        f"  const double r = {r};",
        f"  const float *xp = {ctx.tensor(x)};",
        f"  const double *draws = {draws};",
        f"  float *yp = {ctx.tensor(y)};",
        f"  const int train = ({t}) && r != 0.0;",
        "  const float scale = (float)(1.0 - r);",
        f"  for (long i = 0; i < {n}; i++) {{",
        "    const int keep = !train || draws[i] >= r;",
        "    yp[i] = train ? xp[i] * (float)keep / scale : xp[i];",
    ]
    if mask:
        lines.append(f"    {ctx.tensor(mask)}[i] = ({ctype(ctx.dtype(mask))})keep;")
    return "\n".join([*lines, "  }", "}"])
