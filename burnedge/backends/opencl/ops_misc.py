"""BatchNormalization (inference), Pad (constant, reflect, edge, wrap) and ArgMax / ArgMin, one work item per
output element."""

from __future__ import annotations

import numpy as np

from ...ir import Node
from .emit import Ctx, cltype, kernel
from .ops_elementwise import literal


def _prod(xs) -> int:
    return int(np.prod(xs, dtype=np.int64)) if len(xs) else 1


@kernel("BatchNormalization")
def batch_norm(ctx: Ctx, node: Node) -> None:
    """y = (x - mean) / sqrt(var + eps) * scale + b per channel (axis 1), folded to y = x * a + c at compile time."""
    ctx.require(len([o for o in node.outputs if o]) == 1, "training mode (running statistics outputs)")
    ctx.require(not int(node.attrs.get("training_mode", 0)), "training mode")
    x, y = node.inputs[0], node.outputs[0]
    ctx.require(ctx.dtype(x) == np.float32, f"tensor {x!r} is {ctx.dtype(x)}, not float32")
    params = [ctx.const(n) for n in node.inputs[1:5]]
    ctx.require(all(p is not None for p in params), "scale, bias, mean or variance computed at run time")
    scale, bias, mean, var = (np.asarray(p, np.float64) for p in params)
    a = scale / np.sqrt(var + float(node.attrs.get("epsilon", 1e-5)))
    c = bias - mean * a
    shape = ctx.shape(x)
    n, ch, inner = ctx.size(y), shape[1], _prod(shape[2:])
    pa, pc = ctx.pack(f"{node.name}/a", a.astype(np.float32)), ctx.pack(f"{node.name}/c", c.astype(np.float32))
    body = [f"if (i >= {n}) return;", f"const int k = (i / {inner}) % {ch};",
            f"{ctx.ptr(y)}[i] = fma({ctx.ptr(x)}[i], {pa}[k], {pc}[k]);"]  # fmt: skip
    ctx.launch("\n  ".join(body), n, (ctx.local_1d,))


@kernel("Pad")
def pad(ctx: Ctx, node: Node) -> None:
    x, y = node.inputs[0], node.outputs[0]
    shape, out = ctx.shape(x), ctx.shape(y)
    rank = len(shape)
    mode = node.attrs.get("mode", "constant")
    if isinstance(mode, bytes):
        mode = mode.decode()
    ctx.require(mode in ("constant", "reflect", "edge", "wrap"), f"mode {mode!r}")
    if node.op.since < 11:
        pads = list(node.attrs.get("pads") or node.attrs.get("paddings"))
        value = float(node.attrs.get("value", 0.0))
    else:
        data = ctx.const(node.inputs[1])
        ctx.require(data is not None, "pads computed at run time")
        pads = [int(v) for v in np.asarray(data).reshape(-1)]
        value = 0.0
        if len(node.inputs) > 2 and node.inputs[2]:
            cv = ctx.const(node.inputs[2])
            ctx.require(cv is not None, "constant_value computed at run time")
            value = np.asarray(cv).reshape(-1)[0] if np.asarray(cv).size else 0
        if len(node.inputs) > 3 and node.inputs[3]:
            axes_v = ctx.const(node.inputs[3])
            ctx.require(axes_v is not None, "axes computed at run time")
            axes = [int(a) % rank for a in np.asarray(axes_v).reshape(-1)]
            full = [0] * (2 * rank)
            for j, a in enumerate(axes):
                full[a], full[rank + a] = pads[j], pads[len(axes) + j]
            pads = full
    n = _prod(out)
    ct = cltype(ctx.dtype(y))
    lines = [f"if (i >= {n}) return;", "long r_ = i, src = 0; int inside = 1;"]
    for d in range(rank - 1, -1, -1):
        size, before = shape[d], pads[d]
        lines.append(f"{{ long c = r_ % {out[d]} - {before}; r_ /= {out[d]};")
        if mode == "constant":
            lines.append(f"  if (c < 0 || c >= {size}) inside = 0;")
        elif mode == "edge":
            lines.append(f"  c = c < 0 ? 0 : (c >= {size} ? {size - 1} : c);")
        elif mode == "wrap":
            lines.append(f"  c = ((c % {size}) + {size}) % {size};")
        else:  # reflect, without repeating the edge
            period = max(2 * size - 2, 1)
            lines.append(f"  c = ((c % {period}) + {period}) % {period}; if (c >= {size}) c = {period} - c;")
        lines.append(f"  src += c * {_prod(shape[d + 1 :])}; }}")
    fill = literal(value, ctx.dtype(y))
    lines.append(f"{ctx.ptr(y)}[i] = inside ? {ctx.ptr(x)}[inside ? src : 0] : ({ct}){fill};")
    ctx.launch("\n  ".join(lines), n, (ctx.local_1d,))


@kernel("ArgMax", "ArgMin")
def arg_extreme(ctx: Ctx, node: Node) -> None:
    x, y = node.inputs[0], node.outputs[0]
    shape = ctx.shape(x)
    axis = int(node.attrs.get("axis", 0)) % len(shape)
    last = bool(int(node.attrs.get("select_last_index", 0)))
    outer, dim, inner = _prod(shape[:axis]), shape[axis], _prod(shape[axis + 1 :])
    n = outer * inner
    better = ">" if node.op_type == "ArgMax" else "<"
    cmp = f"v {better}= best" if last else f"v {better} best"
    lines = [
        f"if (i >= {n}) return;",
        f"__global const {cltype(ctx.dtype(x))} *p = {ctx.ptr(x)} + (i / {inner}) * {dim * inner} + i % {inner};",
        "long at = 0; " + f"{cltype(ctx.dtype(x))} best = p[0];",
        f"for (long j = 1; j < {dim}; j++) {{ const {cltype(ctx.dtype(x))} v = p[j * {inner}];",
        f"  if ({cmp}) {{ best = v; at = j; }} }}",
        f"{ctx.ptr(y)}[i] = at;",
    ]
    ctx.launch("\n  ".join(lines), n, (ctx.local_1d,))
