"""Row ops (Softmax, LogSoftmax, LayerNormalization), pools and reductions.

Row ops run one work-group per row: its items stride over the row and combine their partial max / sum in local
memory (a tree, log2 of the group size steps), so a 1000-wide classifier row or a 64-wide transformer row takes
one pass of the group. A row is `length` elements `inner` apart (a softmax over a middle axis). Pools and
reductions run one work item per output element over its window / reduced elements.
"""

from __future__ import annotations

import numpy as np

from ...ir import Node
from ...ops.pool import _geo as pool_geometry
from .emit import Ctx, cltype, kernel
from .ops_elementwise import index_exprs, literal


def _prod(xs) -> int:
    return int(np.prod(xs, dtype=np.int64)) if len(xs) else 1


def _group(length: int) -> int:
    g = 32
    while g < length and g < 256:
        g *= 2
    return g


def _reduce_tree(var: str, op: str, ls: int, buf: str) -> list[str]:
    """Statements combining every item's `var` over the group (local buffer `buf`), result back in `var`."""
    return [
        f"{buf}[lid] = {var}; barrier(CLK_LOCAL_MEM_FENCE);",
        f"for (int s = {ls // 2}; s > 0; s >>= 1) {{",
        f"  if (lid < s) {buf}[lid] = {op.format(f'{buf}[lid]', f'{buf}[lid + s]')}; barrier(CLK_LOCAL_MEM_FENCE); }}",
        f"{var} = {buf}[0]; barrier(CLK_LOCAL_MEM_FENCE);",
    ]


def _rows(ctx: Ctx, outer: int, length: int, inner: int, body: list[str]) -> None:
    ls = _group(length)
    head = [
        "const int lid = get_local_id(0), row = get_group_id(0);",
        f"const long base = (long)(row / {inner}) * {length * inner} + row % {inner};",
        f"__local float red[{ls}];",
    ]
    ctx.launch("\n  ".join(head + body).replace("LS", str(ls)), outer * inner * ls, (ls,))


def _float32(ctx: Ctx, node: Node) -> None:
    for name in [*node.inputs[:1], *node.outputs[:1]]:
        ctx.require(ctx.dtype(name) == np.float32, f"tensor {name!r} is {ctx.dtype(name)}, not float32")


@kernel("Softmax", "LogSoftmax")
def softmax(ctx: Ctx, node: Node) -> None:
    _float32(ctx, node)
    x, y = ctx.ptr(node.inputs[0]), ctx.ptr(node.outputs[0])
    shape = ctx.shape(node.inputs[0]) or (1,)
    old = node.op.since < 13
    axis = int(node.attrs.get("axis", 1 if old else -1)) % len(shape)
    if old:  # coerced to 2-D at the axis
        outer, length, inner = _prod(shape[:axis]), _prod(shape[axis:]), 1
    else:
        outer, length, inner = _prod(shape[:axis]), shape[axis], _prod(shape[axis + 1 :])
    at = f"base + (long)j * {inner}"
    last = "(v - mx) - log(sm)" if node.op_type == "LogSoftmax" else "exp(v - mx) / sm"
    body = [
        "float mx = -INFINITY;",
        f"for (int j = lid; j < {length}; j += LS) mx = fmax(mx, {x}[{at}]);",
        *_reduce_tree("mx", "fmax({0}, {1})", _group(length), "red"),
        "float sm = 0.0f;",
        f"for (int j = lid; j < {length}; j += LS) sm += exp({x}[{at}] - mx);",
        *_reduce_tree("sm", "({0} + {1})", _group(length), "red"),
        f"for (int j = lid; j < {length}; j += LS) {{ const float v = {x}[{at}]; {y}[{at}] = {last}; }}",
    ]
    _rows(ctx, outer, length, inner, body)


@kernel("LayerNormalization")
def layer_norm(ctx: Ctx, node: Node) -> None:
    _float32(ctx, node)
    shape = ctx.shape(node.inputs[0])
    axis = int(node.attrs.get("axis", -1)) % len(shape)
    outer, length = _prod(shape[:axis]), _prod(shape[axis:])
    eps = literal(float(node.attrs.get("epsilon", 1e-5)), np.dtype("float32"))
    x, y = ctx.ptr(node.inputs[0]), ctx.ptr(node.outputs[0])
    scale = node.inputs[1] if len(node.inputs) > 1 and node.inputs[1] else None
    bias = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2] else None
    for t in (scale, bias):
        if t:
            ctx.require(_prod(ctx.shape(t)) in (1, length), f"scale/bias {ctx.shape(t)} is not one per row element")

    def per(t: str) -> str:
        return f"{ctx.ptr(t)}[{'j' if _prod(ctx.shape(t)) == length else '0'}]"

    out = "(v - mean) * rstd"
    if scale:
        out = f"{out} * {per(scale)}"
    if bias:
        out = f"{out} + {per(bias)}"
    body = [
        "float mean = 0.0f;",
        f"for (int j = lid; j < {length}; j += LS) mean += {x}[base + j];",
        *_reduce_tree("mean", "({0} + {1})", _group(length), "red"),
        f"mean /= {length}.0f;",
        "float var = 0.0f;",
        f"for (int j = lid; j < {length}; j += LS) {{ const float d = {x}[base + j] - mean; var += d * d; }}",
        *_reduce_tree("var", "({0} + {1})", _group(length), "red"),
        f"const float rstd = rsqrt(var / {length}.0f + {eps});",
        f"for (int j = lid; j < {length}; j += LS) {{ const float v = {x}[base + j]; {y}[base + j] = {out}; }}",
    ]
    extra = [o for o in node.outputs[1:3]]
    if extra and extra[0]:
        body.append(f"if (lid == 0) {ctx.ptr(extra[0])}[row] = mean;")
    if len(extra) > 1 and extra[1]:
        body.append(f"if (lid == 0) {ctx.ptr(extra[1])}[row] = rstd;")
    _rows(ctx, outer, length, 1, body)


@kernel("MaxPool", "AveragePool")
def pool(ctx: Ctx, node: Node) -> None:
    _float32(ctx, node)
    ctx.require(len(node.outputs) < 2 or not node.outputs[1], "MaxPool's Indices output")
    shape = ctx.shape(node.inputs[0])
    ctx.require(len(shape) in (3, 4), f"{len(shape) - 2}-D pooling (1-D and 2-D run)")
    a = node.attrs
    kernel_, st, dil, geo = pool_geometry(
        shape, a.get("kernel_shape"), a.get("strides"), a.get("dilations"), a.get("pads"),
        a.get("auto_pad", "NOTSET"), int(a.get("ceil_mode", 0)),
    )  # fmt: skip
    out, begin, end_x = list(geo.out), list(geo.begin), list(geo.end_explicit)
    sp = list(shape[2:])
    if len(shape) == 3:
        sp, kernel_, st, dil, out, begin, end_x = (
            [1, *sp],
            [1, *kernel_],
            [1, *st],
            [1, *dil],
            [1, *out],
            [0, *begin],
            [0, *end_x],
        )
    H, Wd = sp
    n = shape[0] * shape[1] * out[0] * out[1]
    x, y = ctx.ptr(node.inputs[0]), ctx.ptr(node.outputs[0])
    is_max = node.op_type == "MaxPool"
    include = bool(int(a.get("count_include_pad", 0)))
    lines = [
        f"if (i >= {n}) return;",
        f"const int ow = i % {out[1]}, oh = (i / {out[1]}) % {out[0]};",
        f"__global const float *xp = {x} + (i / {out[0] * out[1]}) * {H * Wd};",
        "float acc = " + ("-INFINITY" if is_max else "0.0f") + "; int cnt = 0;",
        f"for (int kh = 0; kh < {kernel_[0]}; kh++) {{",
        f"  const int ih = oh * {st[0]} - {begin[0]} + kh * {dil[0]};",
        f"  for (int kw = 0; kw < {kernel_[1]}; kw++) {{",
        f"    const int iw = ow * {st[1]} - {begin[1]} + kw * {dil[1]};",
        f"    if (ih >= 0 && ih < {H} && iw >= 0 && iw < {Wd}) {{ const float v = xp[ih * {Wd} + iw];",
        "      " + ("acc = (v > acc || isnan(v)) ? v : acc;" if is_max else "acc += v;") + " cnt++; }",
        *(
            [
                f"    else if (ih >= -{begin[0]} && ih < {H + end_x[0]} && "
                f"iw >= -{begin[1]} && iw < {Wd + end_x[1]}) cnt++;"
            ]
            if include and not is_max
            else []
        ),
        "  }",
        "}",
        f"{y}[i] = " + ("acc;" if is_max else "acc / (float)cnt;"),
    ]
    ctx.launch("\n  ".join(lines), n, (ctx.local_1d,))


@kernel("GlobalAveragePool", "GlobalMaxPool")
def global_pool(ctx: Ctx, node: Node) -> None:
    _float32(ctx, node)
    shape = ctx.shape(node.inputs[0])
    rows, length = shape[0] * shape[1], _prod(shape[2:])
    x, y = ctx.ptr(node.inputs[0]), ctx.ptr(node.outputs[0])
    is_max = node.op_type == "GlobalMaxPool"
    op = "fmax({0}, {1})" if is_max else "({0} + {1})"
    body = [
        "float acc = " + ("-INFINITY;" if is_max else "0.0f;"),
        f"for (int j = lid; j < {length}; j += LS) acc = {op.format('acc', f'{x}[base + j]')};",
        *_reduce_tree("acc", op, _group(length), "red"),
        f"if (lid == 0) {y}[row] = acc{'' if is_max else f' / {length}.0f'};",
    ]
    _rows(ctx, rows, length, 1, body)


REDUCE = {  # op -> (initial value, accumulate acc with v, final expression of acc over count n)
    "ReduceSum": ("0", "acc + v", "acc"),
    "ReduceMean": ("0", "acc + v", "acc / {n}"),
    "ReduceMax": ("-INFINITY", "(v > acc || isnan(v)) ? v : acc", "acc"),
    "ReduceMin": ("INFINITY", "(v < acc || isnan(v)) ? v : acc", "acc"),
    "ReduceProd": ("1", "acc * v", "acc"),
    "ReduceSumSquare": ("0", "acc + v * v", "acc"),
    "ReduceL1": ("0", "acc + fabs(v)", "acc"),
    "ReduceL2": ("0", "acc + v * v", "sqrt(acc)"),
    "ReduceLogSum": ("0", "acc + v", "log(acc)"),
    "ReduceLogSumExp": ("0", "acc + exp(v)", "log(acc)"),
}


@kernel(*REDUCE)
def reduce(ctx: Ctx, node: Node) -> None:
    x, y = node.inputs[0], node.outputs[0]
    ctx.require(ctx.dtype(x) == np.float32, f"tensor {x!r} is {ctx.dtype(x)}, not float32")
    shape = ctx.shape(x)
    axes = node.attrs.get("axes")
    if len(node.inputs) > 1 and node.inputs[1]:
        data = ctx.const(node.inputs[1])
        ctx.require(data is not None, "axes computed at run time")
        axes = [int(v) for v in np.asarray(data).reshape(-1)]
    if not axes:
        axes = [] if int(node.attrs.get("noop_with_empty_axes", 0)) else list(range(len(shape)))
    axes = sorted({int(a) % len(shape) for a in axes}) if shape else []
    keep = [d for d in range(len(shape)) if d not in axes]
    count = _prod([shape[d] for d in axes])
    n = ctx.size(y)
    # output coordinate -> input base offset; reduced coordinate -> offset within
    in_strides = [_prod(shape[d + 1 :]) for d in range(len(shape))]
    s1, o1 = index_exprs([shape[d] for d in keep] or [1], [[in_strides[d] for d in keep] or [0]], "i")
    s2, o2 = index_exprs([shape[d] for d in axes] or [1], [[in_strides[d] for d in axes] or [0]], "j")
    s2 = [s.replace("r_", "q_").replace("const long c", "const long e") for s in s2]
    o2 = [o.replace("c", "e") for o in o2]
    init, acc, final = REDUCE[node.op_type]
    if not axes:  # noop: the identity of each element through the final expression
        count = 1
    ct = cltype(ctx.dtype(y))
    lines = [
        f"if (i >= {n}) return;",
        *s1,
        f"const long b0 = {o1[0]};",
        f"float acc = {init};",
        f"for (long j = 0; j < {count}; j++) {{",
        *("  " + s for s in s2),
        f"  const float v = {ctx.ptr(x)}[b0 + {o2[0]}];",
        f"  acc = {acc};",
        "}",
        f"{ctx.ptr(y)}[i] = ({ct})({final.format(n=f'{count}.0f')});",
    ]
    ctx.launch("\n  ".join(lines), n, (ctx.local_1d,))
