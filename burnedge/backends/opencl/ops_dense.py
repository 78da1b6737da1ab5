"""Gemm, MatMul, Conv and their fused forms (bias, residual, activation in the epilogue) on the tiled GEMM.

A convolution is an implicit-im2col GEMM: M output channels of a group, N = batch x output pixels, K = input
channels of a group x kernel taps, the group as the GEMM's z; its B loader computes the input pixel of (k, n)
(zero in the padding), so no im2col buffer is written. A convolution with one input channel per group
(depthwise) runs directly instead: one work item per output, looping over its taps.
"""

from __future__ import annotations

import numpy as np

from ...ir import Node
from ...ops.conv import _geo as conv_geometry
from .emit import Ctx, kernel
from .ops_elementwise import index_exprs, literal, strides

SIG = "(__global uchar *A, __global const uchar *W, const int z, const int {0}, const int {1})"


def activation(node: Node, y: str) -> str:
    """The epilogue activation of a fused node (burnedge.ops.fused) as an expression over `y`."""
    act = node.attrs.get("activation", "") or ""
    p = [float(v) for v in node.attrs.get("activation_params", ()) or ()]
    f = [literal(v, np.dtype("float32")) for v in p]
    forms = {
        "": "{y}",
        "Relu": "({y} < 0 ? 0.0f : {y})",
        "Clip": "({y} < {p0} ? {p0} : ({y} > {p1} ? {p1} : {y}))",
        "LeakyRelu": "({y} >= 0 ? {y} : {p0} * {y})",
        "HardSigmoid": "be_clamp01({p0} * {y} + {p1})",
        "HardSwish": "({y} * be_clamp01({y} * (1.0f / 6.0f) + 0.5f))",
        "Sigmoid": "(1.0f / (1.0f + exp(-{y})))",
        "Tanh": "tanh({y})",
        "Gelu": "(0.5f * {y} * (1.0f + erf({y} * 0.70710678118654752f)))",
    }
    if act not in forms:
        raise ValueError(f"unknown epilogue activation {act!r}")
    return forms[act].format(y=y, p0=f[0] if f else "0", p1=f[1] if len(f) > 1 else "0")


def _float_only(ctx: Ctx, node: Node) -> None:
    for name in [*node.inputs, *node.outputs]:
        if name:
            ctx.require(ctx.dtype(name) == np.float32, f"tensor {name!r} is {ctx.dtype(name)}, not float32")


def _matrix(ctx: Ctx, name: str, trans: bool) -> tuple[str, bool]:
    """(pointer, transposed?) of a 2-D operand; a transposed constant is repacked contiguous for coalescing."""
    v = ctx.graph.values[name]
    if trans and v.is_const:
        return ctx.pack(f"{name}/T", np.ascontiguousarray(v.data.T)), False
    return ctx.ptr(name), trans


@kernel("FusedGemm", domain="burnedge")
@kernel("Gemm")
def gemm(ctx: Ctx, node: Node) -> None:
    _float_only(ctx, node)
    a, b = node.inputs[0], node.inputs[1]
    c = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2] else None
    r = node.inputs[3] if len(node.inputs) > 3 and node.inputs[3] else None
    ta, tb = bool(node.attrs.get("transA", 0)), bool(node.attrs.get("transB", 0))
    m, n = ctx.shape(node.outputs[0])
    k = ctx.shape(a)[0] if ta else ctx.shape(a)[1]
    alpha, beta = float(node.attrs.get("alpha", 1.0)), float(node.attrs.get("beta", 1.0))
    pa, ta = _matrix(ctx, a, ta)
    pb, tb = _matrix(ctx, b, tb)
    lda = f"{pa}[k * {m} + m]" if ta else f"{pa}[m * {k} + k]"
    ldb = f"{pb}[n * {k} + k]" if tb else f"{pb}[k * {n} + n]"
    y = "acc" if alpha == 1.0 else f"({literal(alpha, np.dtype('float32'))} * acc)"
    if c is not None:
        sc = strides(ctx.shape(c), (m, n))
        term = f"{ctx.ptr(c)}[m * {sc[0]} + n * {sc[1]}]"
        y = f"({y} + {term})" if beta == 1.0 else f"({y} + {literal(beta, np.dtype('float32'))} * {term})"
    _emit_dense(ctx, node, m, n, k, 1, lda, ldb, y, f"m * {n} + n", r)


def _emit_dense(ctx, node, m, n, k, z, lda, ldb, y, out_index, r, z_a="", z_b="", z_o="", tag="") -> None:
    out = node.outputs[0]
    res = f" + {ctx.ptr(r)}[o]" if r else ""
    helpers = (
        f"inline float KERNEL_NAME_lda{SIG.format('m', 'k')} {{ {z_a}return {lda}; }}\n"
        f"inline float KERNEL_NAME_ldb{SIG.format('k', 'n')} {{ {z_b}return {ldb}; }}\n"
        f"inline void KERNEL_NAME_st{SIG.format('m', 'n')[:-1]}, const float acc) {{\n"
        f"  {z_o}const long o = {out_index};\n  const float y = {y}{res};\n"
        f"  {ctx.ptr(out)}[o] = {activation(node, 'y')};\n}}"
    )
    ctx.gemm(m, n, k, z, helpers, tag)


def _strided_batch(batch: tuple[int, ...], st: list[int]) -> tuple[str, str]:
    """(statements, expression) of the element offset of batch `z` over `batch` with element strides `st`."""
    if not batch or not any(st):
        return "", "0"
    stmts, offs = index_exprs(list(batch), [st], "z")
    return " ".join(stmts).replace("long r_", "long rz_").replace("r_", "rz_"), offs[0]


def _through(shape: tuple[int, ...], perm, batch: tuple[int, ...]) -> tuple[tuple[int, ...], list[int], int, int]:
    """An operand of rank >= 2 read through `perm` (None: as it is): (its logical shape, element strides of the
    batch dims over `batch` (0 where broadcast), row stride, column stride)."""
    cont = [int(np.prod(shape[d + 1 :], dtype=np.int64)) for d in range(len(shape))]
    order = list(perm) if perm else list(range(len(shape)))
    logical, st = tuple(shape[p] for p in order), [cont[p] for p in order]
    nb, pad = len(logical) - 2, len(batch) - (len(logical) - 2)
    bst = [0] * pad + [st[j] if logical[j] != 1 else 0 for j in range(nb)]
    return logical, bst, st[-2], st[-1]


@kernel("FusedMatMul", domain="burnedge")
@kernel("MatMul")
def matmul(ctx: Ctx, node: Node) -> None:
    """C = A @ B with numpy's broadcasting; a FusedMatMul may read A or B through a permutation and store C
    through one (passes/fold_transpose.py): the Transposes around attention cost no kernel of their own."""
    _float_only(ctx, node)
    a, b = node.inputs[0], node.inputs[1]
    bias = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2] else None
    r = node.inputs[3] if len(node.inputs) > 3 and node.inputs[3] else None
    perm_a, perm_b, perm_y = (node.attrs.get(key) for key in ("perm_a", "perm_b", "perm_y"))
    sa, sb = ctx.shape(a), ctx.shape(b)
    ctx.require(not perm_y or not r, "a transposed store with a residual")
    if perm_a or perm_b or perm_y:
        ctx.require(len(sa) >= 2 and len(sb) >= 2, "a permuted MatMul operand of rank < 2")
    a2 = tuple(sa[p] for p in perm_a) if perm_a else (sa if len(sa) >= 2 else (1, sa[0]))
    b2 = tuple(sb[p] for p in perm_b) if perm_b else (sb if len(sb) >= 2 else (sb[0], 1))
    m, k, n = a2[-2], a2[-1], b2[-1]
    batch = tuple(np.broadcast_shapes(a2[:-2], b2[:-2]))
    z = int(np.prod(batch, dtype=np.int64)) if batch else 1
    if len(sa) >= 2:
        _, st, rs, cs = _through(sa, perm_a, batch)
        za, oa = _strided_batch(batch, st)
        lda = f"{ctx.ptr(a)}[{oa} + m * {rs} + k * {cs}]"
    else:
        za, lda = "", f"{ctx.ptr(a)}[k]"
    if len(sb) >= 2:
        _, st, rs, cs = _through(sb, perm_b, batch)
        zb, ob = _strided_batch(batch, st)
        ldb = f"{ctx.ptr(b)}[{ob} + k * {rs} + n * {cs}]"
    else:
        zb, ldb = "", f"{ctx.ptr(b)}[k]"
    y = "acc"
    if bias is not None:
        full = batch + (m, n)
        ctx.require(len(ctx.shape(bias)) <= len(full), f"bias {ctx.shape(bias)} does not broadcast to {full}")
        sbias = strides(ctx.shape(bias), full)
        ctx.require(
            not any(s for s, d in zip(sbias, batch) if d > 1), f"a bias {ctx.shape(bias)} with batch dimensions"
        )
        y = f"(acc + {ctx.ptr(bias)}[m * {sbias[-2]} + n * {sbias[-1]}])"
    zo, out_index = "", f"(long)z * {m * n} + m * {n} + n"
    if perm_y:  # C's dim e lands at dim inv[e] of the stored (transposed) output
        shape_t = ctx.shape(node.outputs[0])
        cont = [int(np.prod(shape_t[d + 1 :], dtype=np.int64)) for d in range(len(shape_t))]
        inv = [list(perm_y).index(e) for e in range(len(perm_y))]
        st = [cont[inv[e]] for e in range(len(perm_y))]
        zo, oo = _strided_batch(batch, st[:-2])
        out_index = f"{oo} + m * {st[-2]} + n * {st[-1]}"
    _emit_dense(ctx, node, m, n, k, z, lda, ldb, y, out_index, r, za, zb, zo)


def conv_geo(ctx: Ctx, node: Node) -> dict[str, int]:
    x, w = node.inputs[0], node.inputs[1]
    xs, ws = ctx.shape(x), ctx.shape(w)
    ctx.require(len(xs) in (3, 4), f"{len(xs) - 2}-D convolution (1-D and 2-D run)")
    a = node.attrs
    kernel_, st, dil, geo = conv_geometry(
        xs, ws, a.get("kernel_shape"), a.get("strides"), a.get("dilations"), a.get("pads"), a.get("auto_pad", "NOTSET")
    )
    if len(xs) == 3:  # 1-D: a 2-D convolution of height 1
        xs, kernel_, st, dil = (*xs[:2], 1, xs[2]), [1, *kernel_], [1, *st], [1, *dil]
        out, begin = [1, geo.out[0]], [0, geo.begin[0]]
    else:
        out, begin = geo.out, geo.begin
    group = int(a.get("group", 1))
    return dict(
        B=xs[0], C=xs[1], H=xs[2], W=xs[3], M=ws[0], G=group, Cg=xs[1] // group, Mg=ws[0] // group,
        KH=kernel_[0], KW=kernel_[1], SH=st[0], SW=st[1], DH=dil[0], DW=dil[1], PH=begin[0], PW=begin[1],
        OH=out[0], OW=out[1],
    )  # fmt: skip


@kernel("FusedConv", domain="burnedge")
@kernel("Conv")
def conv(ctx: Ctx, node: Node) -> None:
    _float_only(ctx, node)
    g = conv_geo(ctx, node)
    x, w = ctx.ptr(node.inputs[0]), ctx.ptr(node.inputs[1])
    bias = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2] else None
    r = node.inputs[3] if len(node.inputs) > 3 and node.inputs[3] else None
    ohw, khw = g["OH"] * g["OW"], g["KH"] * g["KW"]
    if g["Cg"] == 1 and g["G"] > 1:
        return _depthwise(ctx, node, g, x, w, bias, r)
    kk = g["Cg"] * khw
    lda = f"{w}[(z * {g['Mg']} + m) * {kk} + k]"
    simple = khw == 1 and g["SH"] == g["SW"] == 1 and g["PH"] == g["PW"] == 0 and ohw == g["H"] * g["W"]
    inlined = ctx.inlined.get(node.inputs[0])
    if simple and inlined is not None:  # the depthwise conv before it, computed where its output is read
        z_b, ldb = _depthwise_value(ctx, inlined)
    elif simple:
        z_b = f"const int bi = n / {ohw}, p = n % {ohw}; "
        ldb = f"{x}[(bi * {g['C']} + z * {g['Cg']} + k) * {ohw} + p]"
    else:
        z_b = (
            f"const int ci = k / {khw}, t = k % {khw}, kh = t / {g['KW']}, kw = t % {g['KW']}; "
            f"const int bi = n / {ohw}, p = n % {ohw}, oh = p / {g['OW']}, ow = p % {g['OW']}; "
            f"const int ih = oh * {g['SH']} - {g['PH']} + kh * {g['DH']}, "
            f"iw = ow * {g['SW']} - {g['PW']} + kw * {g['DW']}; "
            f"if (ih < 0 || ih >= {g['H']} || iw < 0 || iw >= {g['W']}) return 0.0f; "
        )
        ldb = f"{x}[((bi * {g['C']} + z * {g['Cg']} + ci) * {g['H']} + ih) * {g['W']} + iw]"
    co = f"(z * {g['Mg']} + m)"
    y = f"(acc + {ctx.ptr(bias)}[{co}])" if bias else "acc"
    out_index = f"((long)(n / {ohw}) * {g['M']} + {co}) * {ohw} + n % {ohw}"
    tag = "/dw" if simple and inlined is not None else ""
    _emit_dense(ctx, node, g["Mg"], g["B"] * ohw, kk, g["G"], lda, ldb, y, out_index, r, "", z_b, tag=tag)


def _taps(g: dict[str, int], x: str, w: str) -> list[str]:
    """Statements summing depthwise output (bi, co, oh, ow) (all defined before) over its KH x KW taps of input
    channel ci into `acc`."""
    return [
        f"__global const float *xp = {x} + ((long)bi * {g['C']} + ci) * {g['H'] * g['W']};",
        f"__global const float *wp = {w} + co * {g['KH'] * g['KW']};",
        "float acc = 0.0f;",
        f"#pragma unroll\n  for (int kh = 0; kh < {g['KH']}; kh++) {{",
        f"  const int ih = oh * {g['SH']} - {g['PH']} + kh * {g['DH']};",
        f"  if (ih < 0 || ih >= {g['H']}) continue;",
        f"  #pragma unroll\n    for (int kw = 0; kw < {g['KW']}; kw++) {{",
        f"    const int iw = ow * {g['SW']} - {g['PW']} + kw * {g['DW']};",
        f"    if (iw >= 0 && iw < {g['W']}) acc = fma(xp[ih * {g['W']} + iw], wp[kh * {g['KW']} + kw], acc);",
        "  }",
        "}",
    ]


def _depthwise(ctx: Ctx, node: Node, g: dict[str, int], x: str, w: str, bias, r) -> None:
    """One work item per output element: co's input channel co / (M/C), its KH x KW taps."""
    n = g["B"] * g["M"] * g["OH"] * g["OW"]
    ctx.flops += 2 * n * g["KH"] * g["KW"]
    lines = [
        f"if (i >= {n}) return;",
        f"const int ow = i % {g['OW']}, oh = (i / {g['OW']}) % {g['OH']}, co = (i / {g['OH'] * g['OW']}) % {g['M']};",
        f"const int bi = i / {g['M'] * g['OH'] * g['OW']}, ci = co / {g['Mg']};",
        *_taps(g, x, w),
        f"float y = acc{f' + {ctx.ptr(bias)}[co]' if bias else ''}{f' + {ctx.ptr(r)}[i]' if r else ''};",
        f"{ctx.ptr(node.outputs[0])}[i] = {activation(node, 'y')};",
    ]
    ctx.launch("\n  ".join(lines), n, (ctx.local_1d,))


def _depthwise_value(ctx: Ctx, dw: Node) -> tuple[str, str]:
    """(statements, expression) of depthwise node `dw`'s output at channel k, pixel n (the B loader of the 1x1
    convolution reading it): its taps, bias and activation, as its own kernel would compute them."""
    g = conv_geo(ctx, dw)
    bias = dw.inputs[2] if len(dw.inputs) > 2 and dw.inputs[2] else None
    ohw = g["OH"] * g["OW"]
    head = f"const int bi = n / {ohw}, p = n % {ohw}, oh = p / {g['OW']}, ow = p % {g['OW']}, co = k, ci = k;"
    body = [head, *_taps(g, ctx.ptr(dw.inputs[0]), ctx.ptr(dw.inputs[1]))]
    body.append(f"const float y = acc{f' + {ctx.ptr(bias)}[co]' if bias else ''};")
    return "\n  ".join(body) + "\n  ", activation(dw, "y")


def depthwise_pairs(g) -> dict[int, Node]:
    """Step of a 1x1 convolution -> the depthwise convolution right before it, which a run computes inside it
    (one launch fewer: a GPU's host pays several microseconds per launch, and a small net is all launches).
    Taken where the depthwise output has that one reader, is no graph output, and is read as it lies (the plain
    implicit GEMM: stride 1, no padding, one group); the backend's `reads` keeps the depthwise input alive.
    Only for few output channels: on an H200 (2026-12-04) the fused kernel was faster at M <= 32 (MobileNetV2's
    first projections: 10-50% at batch 1 and 32) and at M = 64 over K = 64 (the KWS net: 30%), slower from
    M = 64 over K >= 192 (the depthwise values are recomputed by every work-group row of M)."""
    readers = g.consumers()
    shapes = _Shapes(g)
    found = {}
    for i, (dw, pw) in enumerate(zip(g.nodes, g.nodes[1:])):
        if dw.op_type not in ("Conv", "FusedConv") or pw.op_type not in ("Conv", "FusedConv") or not dw.outputs:
            continue
        y = dw.outputs[0]
        if y in g.outputs or [id(n) for n in readers.get(y, [])] != [id(pw)] or pw.inputs.count(y) != 1:
            continue
        if pw.inputs[0] != y or (len(dw.inputs) > 3 and dw.inputs[3]) or g.values[dw.inputs[0]].is_const:
            continue
        if any(g.values[n].dtype != np.float32 for n in [*dw.inputs, *dw.outputs, *pw.inputs, *pw.outputs] if n):
            continue
        try:
            a, b = conv_geo(shapes, dw), conv_geo(shapes, pw)
        except (ValueError, IndexError, KeyError):
            continue
        if not (a["Cg"] == 1 and a["G"] > 1 and a["Mg"] == 1 and b["G"] == 1 and b["KH"] * b["KW"] == 1):
            continue
        if not (b["M"] <= 32 or (b["M"] <= 64 and b["C"] <= 128)):
            continue  # each group of M rows recomputes the depthwise values it reads: measured slower past that
        if b["SH"] == b["SW"] == 1 and not (b["PH"] or b["PW"]) and b["OH"] * b["OW"] == b["H"] * b["W"]:
            found[i + 1] = dw
    return found


def inline_depthwise(plan) -> dict[str, Node]:
    """The depthwise_pairs of `plan` by the depthwise output's name, where the plan lets the 1x1 convolution
    read the depthwise input throughout: nothing it writes (output, split-K scratch) lies over that input."""
    g = plan.graph

    def span(name: str) -> tuple[int, int]:
        v, off = g.values[name], plan.offsets.get(name)
        return (-1, -1) if off is None else (off, off + int(np.prod(v.shape, dtype=np.int64)) * v.dtype.itemsize)

    def apart(a: tuple[int, int], b: tuple[int, int]) -> bool:
        return a[1] <= b[0] or b[1] <= a[0]

    found = {}
    for step, dw in depthwise_pairs(g).items():
        src, (s_off, s_len) = span(dw.inputs[0]), plan.scratch.get(step, (0, 0))
        if apart(src, span(g.nodes[step].outputs[0])) and apart(src, (s_off, s_off + s_len)):
            found[dw.outputs[0]] = dw
    return found


class _Shapes:
    """The part of Ctx that `conv_geo` reads, over a bare graph (for the backend's scratch sizes)."""

    def __init__(self, graph):
        self.graph = graph

    def shape(self, name: str) -> tuple[int, ...]:
        return self.graph.values[name].shape

    def require(self, ok: bool, reason: str) -> None:
        if not ok:
            raise ValueError(reason)


def problem(graph, node: Node) -> tuple[int, int, int, int] | None:
    """(M, N, K, z) of the GEMM that runs `node` (as the generators above set it up), None for other nodes."""
    op = node.op_type
    shape = _Shapes(graph).shape
    try:
        if op in ("Gemm", "FusedGemm"):
            m, n = shape(node.outputs[0])
            a = shape(node.inputs[0])
            return m, n, a[0] if node.attrs.get("transA", 0) else a[1], 1
        if op in ("MatMul", "FusedMatMul"):
            sa, sb = shape(node.inputs[0]), shape(node.inputs[1])
            pa, pb = node.attrs.get("perm_a"), node.attrs.get("perm_b")
            a2 = tuple(sa[p] for p in pa) if pa else (sa if len(sa) >= 2 else (1, sa[0]))
            b2 = tuple(sb[p] for p in pb) if pb else (sb if len(sb) >= 2 else (sb[0], 1))
            batch = tuple(np.broadcast_shapes(a2[:-2], b2[:-2]))
            return a2[-2], b2[-1], a2[-1], int(np.prod(batch, dtype=np.int64)) if batch else 1
        if op in ("Conv", "FusedConv"):
            g = conv_geo(_Shapes(graph), node)
            if g["Cg"] == 1 and g["G"] > 1:
                return None
            return g["Mg"], g["B"] * g["OH"] * g["OW"], g["Cg"] * g["KH"] * g["KW"], g["G"]
    except (ValueError, IndexError, KeyError):
        return None
    return None
