"""BatchNormalization (inference), Pad (constant, reflect, edge, wrap), ArgMax / ArgMin, CumSum, DepthToSpace and
SpaceToDepth, one work item per output element (CumSum: per scanned line)."""

from __future__ import annotations

import numpy as np

from ...ir import Node
from .emit import Ctx, cltype, kernel
from .ops_elementwise import literal
from .ops_shape import copy_mapped


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
    eps = float(node.attrs.get("epsilon", 1e-5))
    shape = ctx.shape(x)
    n, ch, inner = ctx.size(y), shape[1], _prod(shape[2:])
    body = [f"if (i >= {n}) return;", f"const int k = (i / {inner}) % {ch};"]
    if all(p is not None for p in params):  # folded: y = x * a + c
        scale, bias, mean, var = (np.asarray(p, np.float64) for p in params)
        a = scale / np.sqrt(var + eps)
        c = bias - mean * a
        pa, pc = ctx.pack(f"{node.name}/a", a.astype(np.float32)), ctx.pack(f"{node.name}/c", c.astype(np.float32))
        body.append(f"{ctx.ptr(y)}[i] = fma({ctx.ptr(x)}[i], {pa}[k], {pc}[k]);")
    else:  # statistics fed at run time
        for name in node.inputs[1:5]:
            ctx.require(ctx.dtype(name) == np.float32, f"tensor {name!r} is {ctx.dtype(name)}, not float32")
        s, b, m, v = (ctx.ptr(name) for name in node.inputs[1:5])
        eps_s = literal(eps, np.dtype("float32"))
        body.append(f"{ctx.ptr(y)}[i] = ({ctx.ptr(x)}[i] - {m}[k]) * {s}[k] / sqrt({v}[k] + {eps_s}) + {b}[k];")
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
            if cv is None:  # fed at run time: read it from the arena
                value = f"{ctx.ptr(node.inputs[2])}[0]"
            else:
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
    fill = value if isinstance(value, str) else literal(value, ctx.dtype(y))
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


@kernel("CumSum")
def cumsum(ctx: Ctx, node: Node) -> None:
    x, y = node.inputs[0], node.outputs[0]
    shape = ctx.shape(x)
    ax = ctx.const(node.inputs[1])
    ctx.require(ax is not None, "axis computed at run time")
    axis = int(np.asarray(ax).reshape(-1)[0]) % max(len(shape), 1)
    outer, dim, inner = _prod(shape[:axis]), shape[axis], _prod(shape[axis + 1 :])
    exclusive, reverse = bool(node.attrs.get("exclusive", 0)), bool(node.attrs.get("reverse", 0))
    ct = cltype(ctx.dtype(y))
    j = f"({dim - 1} - t)" if reverse else "t"
    step = f"{{ const {ct} v = xp[{j} * {inner}]; yp[{j} * {inner}] = {'acc' if exclusive else 'acc + v'}; acc += v; }}"
    lines = [
        f"if (i >= {outer * inner}) return;",
        f"const long base = (i / {inner}) * {dim * inner} + i % {inner};",
        f"__global const {ct} *xp = {ctx.ptr(x)} + base; __global {ct} *yp = {ctx.ptr(y)} + base;",
        f"{ct} acc = 0;",
        f"for (long t = 0; t < {dim}; t++) {step}",
    ]
    ctx.launch("\n  ".join(lines), outer * inner, (ctx.local_1d,))


@kernel("DepthToSpace", "SpaceToDepth")
def depth_space(ctx: Ctx, node: Node) -> None:
    """A reshape, a transpose and a reshape, done as one mapped copy over the transposed 6-D view."""
    n, c, h, w = ctx.shape(node.inputs[0])
    b = int(node.attrs["blocksize"])
    if node.op_type == "SpaceToDepth":
        view, perm = (n, c, h // b, b, w // b, b), (0, 3, 5, 1, 2, 4)
    elif node.attrs.get("mode", "DCR") in ("CRD", b"CRD"):
        view, perm = (n, c // (b * b), b, b, h, w), (0, 1, 4, 2, 5, 3)
    else:
        view, perm = (n, b, b, c // (b * b), h, w), (0, 3, 4, 1, 5, 2)
    st = [_prod(view[d + 1 :]) for d in range(6)]
    copy_mapped(ctx, node.inputs[0], node.outputs[0], [view[p] for p in perm], [st[p] for p in perm])
