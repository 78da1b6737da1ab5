"""int8 lowerings: the burnedge-domain ops of `burnedge/ops/quantized.py` and ONNX QuantizeLinear/DequantizeLinear.

Everything that depends only on constants is computed here, once: weights repacked as int16-pair A panels (QConv)
or int8-pair B panels (QMatMul), the same on every target; the input zero point folded into QConv's and QMatMul's
bias (``bias - x_zp * sum(w)``, wrapping int32 like the kernel's sums, so the kernels read raw int8 activations:
the ARM sdot tile needs them in int8); and the requantisation parameters normalised (`rq_params`, the rule of
qgemm.h: degenerate multipliers and shifts replaced by equivalent ones, and the accumulator clamp ``lim``). Kernels
are in kernels/qgemm.c, qconv.c, qelementwise.c and qpool.c.
"""

from __future__ import annotations

import math

import numpy as np

from ....ir import Graph, Node
from . import Ctx, lower, per_graph
from .conv import conv_fields
from .pool import covers_input, pool_window
from .reduce import attr

QMR, QNR, MAX_THREADS = 6, 16, 4  # qgemm.h: BE_QMR, BE_QNR, BE_Q_MAX_THREADS
DW_MAX_TAPS = 512  # qconv.h: float sums of at most 512 products are exact


def rq_params(mult, shift, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalised (m, s, lim) int32 arrays of n channels for qgemm.h's rule, s = 31 - shift in 1..62.

    0 < m < 2^30 -> (m * 2^k, s + k) with m * 2^k in [2^30, 2^31) (the same quotient);
    m == 0 or s >= 63 -> (0, 32): the result is 0; s <= 0 -> (2^30, 1): any non-zero accumulator saturates, as
    with the original; lim = 1 for s <= 20, 2^(s-21) for s <= 31, else INT32_MAX (past lim the output saturates).
    """
    m = np.broadcast_to(np.asarray(mult, np.int64).reshape(-1), (n,)).copy()
    s = 31 - np.broadcast_to(np.asarray(shift, np.int64).reshape(-1), (n,))
    if np.any(m < 0) or np.any(m >= 2**31):
        raise ValueError("requantisation multipliers must lie in [0, 2^31)")
    k = np.where(m > 0, 30 - np.floor(np.log2(np.maximum(m, 1))).astype(np.int64), 0)
    m, s = m << k, s + k
    zero = (m == 0) | (s >= 63)
    sat = ~zero & (s <= 0)
    m = np.where(zero, 0, np.where(sat, 2**30, m))
    s = np.where(zero, 32, np.where(sat, 1, s))
    lim = np.where(s <= 20, 1, np.where(s <= 31, np.left_shift(1, np.clip(s - 21, 0, 30)), 2**31 - 1))
    return m.astype(np.int32), s.astype(np.int32), lim.astype(np.int32)


def _wrap32(v: np.ndarray) -> np.ndarray:
    """int64 values modulo 2^32 as int32."""
    return (np.asarray(v, np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


def _input(node: Node, i: int) -> str:
    return node.inputs[i] if len(node.inputs) > i and node.inputs[i] else ""


def _require_i8(ctx: Ctx, names: list[str]) -> None:
    for name in names:
        if name:
            ctx.require(ctx.dtype(name) == np.int8, f"{name!r} is {ctx.dtype(name)}, not int8")


def _epi(ctx: Ctx, key: str, node: Node, bias: np.ndarray | None, n: int, per_col: bool, zp: int) -> str:
    """A be_qepi initializer; per-column arrays are padded to a multiple of 16 channels."""
    m, s, lim = rq_params(node.attrs["multiplier"], node.attrs["shift"], n)
    pad = -(-n // QNR) * QNR - n if per_col else 0
    m, s, lim = np.pad(m, (0, pad)), np.pad(s, (0, pad), constant_values=32), np.pad(lim, (0, pad), constant_values=1)
    b = ctx.pack(f"{key}:bias", np.pad(bias.astype(np.int32), (0, pad))) if bias is not None else "0"
    lo, hi = int(attr(node, "y_min", -128)), int(attr(node, "y_max", 127))
    ctx.require(-128 <= lo <= hi <= 127, f"[y_min, y_max] = [{lo}, {hi}] is not inside int8")
    return (
        f"{{{b}, {ctx.pack(f'{key}:m', m)}, {ctx.pack(f'{key}:s', s)}, {ctx.pack(f'{key}:lim', lim)}, {zp}, {lo}, "
        f"{hi}, {int(per_col)}}}"
    )


# -- channels-last int8 tensors -------------------------------------------------------------------------------------
ELEMENTWISE = ("QAdd", "QMul", "QLut", "QRequant")


def _dw_mult1(f: list[int], w: tuple[int, ...]) -> bool:
    return w[1] == 1 and f[5] > 1 and f[4] == f[1] == f[5] and f[6] * f[7] <= DW_MAX_TAPS


def _nhwc_conv(graph: Graph, node: Node) -> bool:
    """A QConv the channels-last kernels run (qconv_nhwc.c): constant weights, 1-D/2-D, one group or depthwise
    with multiplier 1."""
    if (node.op.domain, node.op_type) != ("burnedge", "QConv") or not node.inputs[1]:
        return False
    if not graph.values[node.inputs[1]].is_const:
        return False
    f = conv_fields(graph, node)
    return f is not None and (f[5] == 1 or _dw_mult1(f, graph.values[node.inputs[1]].shape))


def _nhwc_pool(graph: Graph, node: Node) -> bool:
    """An int8 average pool whose one window is the whole input (it reads a channels-last input too)."""
    if node.op.domain != "burnedge" or node.op_type not in ("QGlobalAvgPool", "QAvgPool"):
        return False
    shape = tuple(graph.values[node.inputs[0]].shape)
    if len(shape) not in (3, 4) or 0 in shape:
        return False
    return node.op_type == "QGlobalAvgPool" or covers_input(shape, node)


def _layout_free(graph: Graph, node: Node) -> bool:
    """An elementwise int8 op whose operands all have the output's shape: it works on bytes in any layout."""
    if node.op.domain != "burnedge" or node.op_type not in ELEMENTWISE or node.captures:
        return False
    out = tuple(graph.values[node.outputs[0]].shape)
    return all(tuple(graph.values[i].shape) == out for i in node.inputs if i)


@per_graph
def nhwc_int8_tensors(graph: Graph) -> set[str]:
    """Names of the int8 tensors stored channels-last (N, H, W, C; N, L, C in 1-D).

    1. candidates: rank-3/4 int8 outputs of channels-last QConvs and of layout-free elementwise ops, no graph
       output, every reader a channels-last QConv (as input 0), a whole-input average pool or a layout-free op;
    2. a layout-free op keeps its operands and its output in one layout: while one of them is not a candidate,
       drop them all (a fixed point: candidates only ever leave).
    """
    conv = {id(n) for n in graph.nodes if _nhwc_conv(graph, n)}
    pool = {id(n) for n in graph.nodes if _nhwc_pool(graph, n)}
    free = [n for n in graph.nodes if _layout_free(graph, n)]
    free_ids = {id(n) for n in free}
    readers_ok: dict[str, bool] = {}
    for node in graph.nodes:
        for i, name in enumerate(node.inputs):
            if not name:
                continue
            ok = (id(node) in conv and i == 0 and name not in node.inputs[1:]) or id(node) in free_ids
            ok = ok or (id(node) in pool and i == 0)
            readers_ok[name] = readers_ok.get(name, True) and ok
        for name in node.captures:
            readers_ok[name] = False
    outs = set(graph.outputs)
    found = set()
    for node in graph.nodes:
        if id(node) in conv or id(node) in free_ids:
            y = node.outputs[0]
            v = graph.values[y]
            if y not in outs and readers_ok.get(y) and v.dtype == np.int8 and len(v.shape) in (3, 4):
                found.add(y)
    changed = True
    while changed:
        changed = False
        for node in free:
            group = [n for n in (*node.inputs, node.outputs[0]) if n]
            if any(n not in found for n in group) and any(n in found for n in group):
                found.difference_update(group)
                changed = True
    return found


# -- QConv ----------------------------------------------------------------------------------------------------------
def _qconv_geo(graph: Graph, node: Node) -> tuple[str, list[int], int] | None:
    """(kind, be_qconv_geo fields, NHWC flags), None for shapes the kernels do not take. Kinds: "dwc" (channels-last
    depthwise, multiplier 1), "nhwc" (channels-last implicit GEMM, one group), "dw" (per-plane depthwise, other
    multipliers), "gemm" (im2col + GEMM, any group)."""
    fields = conv_fields(graph, node)
    if fields is None:
        return None
    w = graph.values[node.inputs[1]].shape
    group, kernel = fields[5], fields[6:8]
    flags = 0
    if _nhwc_conv(graph, node):
        nhwc = nhwc_int8_tensors(graph)
        flags = (1 if node.inputs[0] in nhwc else 0) | (2 if node.outputs[0] in nhwc else 0)
        if _dw_mult1(fields, w):
            return "dwc", fields, flags
        if flags:
            return "nhwc", fields, flags
    dw = w[1] == 1 and group > 1 and group == fields[1] and kernel[0] * kernel[1] <= DW_MAX_TAPS
    return ("dw" if dw else "gemm"), fields, flags


def _qconv_scratch(graph: Graph, node: Node) -> int:
    info = _qconv_geo(graph, node)
    if info is None:
        return 0
    kind, f, _ = info
    n, c, h, wd, m, g, kh, kw, sh, sw, dh, dwl, ph, pw, oh, ow = f
    if kind == "dwc":  # qconv.h: be_qdw_nhwc_slice with a band of every output row
        wp = (ow - 1) * sw + (kw - 1) * dwl + 1
        rin = (oh - 1) * sh + (kh - 1) * dh + 1
        return (MAX_THREADS * (-(-(rin * wp * (-(-c // 8) * 8)) // 16) * 16) + 64) * 4
    if kind == "nhwc":  # qconv.h: be_qconv_nhwc_scratch
        k = c * kh * kw
        panel = (k + 3) // 4 * 2 * QMR * 4 + 64
        copy = -(-(((oh - 1) * sh + (kh - 1) * dh + 1) * ((ow - 1) * sw + (kw - 1) * dwl + 1) * c + 64) // 64) * 64
        return copy + MAX_THREADS * (-(-(QMR * k + 64 + QMR * m + 64 + panel) // 64) * 64) + 64
    if kind == "dw":
        wp = (ow - 1) * sw + (kw - 1) * dwl + 1
        row = max(-(-wp // sw), (ow + 7) // 8 * 8 + (kw - 1) * dwl // sw + 8)
        hp = (oh - 1) * sh + (kh - 1) * dh + 1
        return (MAX_THREADS * ((hp + 1) * sw * row + 16) + 64) * 4
    k = c // g * kh * kw
    k2, k4 = (k + 1) // 2, (k + 3) // 4
    nb = max(1, min(16, 16384 // (k2 * 32)))
    return MAX_THREADS * (k * QNR + nb * k4 * 64 + k4 * 24 + 64) + 64  # qconv.h be_qconv_slice


def pack_a_pairs(mat: np.ndarray) -> np.ndarray:
    """(rows, K) int -> int16 A panels: rows padded to QMR, K to even; [panel][kp][r][2]."""
    rows, k = mat.shape
    pad = np.zeros((-(-rows // QMR) * QMR, k + k % 2), np.int16)
    pad[:rows, :k] = mat
    return np.ascontiguousarray(pad.reshape(-1, QMR, pad.shape[1] // 2, 2).transpose(0, 2, 1, 3)).reshape(-1)


def pack_b_pairs(mat: np.ndarray) -> np.ndarray:
    """(K, cols) int8 -> B panels: K padded to even, columns to QNR; [panel][kp][c][2]."""
    k, cols = mat.shape
    pad = np.zeros((k + k % 2, -(-cols // QNR) * QNR), np.int8)
    pad[:k, :cols] = mat
    return np.ascontiguousarray(pad.reshape(pad.shape[0] // 2, 2, -1, QNR).transpose(2, 0, 3, 1)).reshape(-1)


@lower("QConv", domain="burnedge", scratch=_qconv_scratch)
def qconv(ctx: Ctx, node: Node) -> str:
    x_name, w_name, b_name, y_name = node.inputs[0], node.inputs[1], _input(node, 2), node.outputs[0]
    _require_i8(ctx, [x_name, w_name, y_name])
    info = _qconv_geo(ctx.graph, node)
    ctx.require(info is not None, "only 1-D and 2-D convolutions are supported")
    kind, f, flags = info
    w = ctx.const(w_name)
    ctx.require(w is not None, "the weights must be constant")
    bias = ctx.const(b_name) if b_name else None
    ctx.require(not b_name or bias is not None, "the bias must be constant")
    m, g = f[4], f[5]
    xzp, yzp = int(attr(node, "x_zero_point", 0)), int(attr(node, "y_zero_point", 0))
    key = f"q:conv:{y_name}"
    wm = w.astype(np.int64).reshape(m, -1)
    geo = "static const be_qconv_geo geo = {" + ", ".join(map(str, f)) + "};"
    x, y = ctx.tensor(x_name), ctx.tensor(y_name)
    if kind in ("dw", "dwc"):
        b = bias.astype(np.int64).reshape(m) if bias is not None else None
        epi = _epi(ctx, key, node, b, m, kind == "dwc", yzp)  # dwc: channel arrays padded to 16
        if kind == "dwc":  # [tap][C8]
            c8 = -(-m // 8) * 8
            wf = ctx.pack(f"{key}:wf", np.pad(wm.T, ((0, 0), (0, c8 - m))).astype(np.float32))
            call = f"be_qdwconv_nhwc_i8({x}, {wf}, {y}, &ep, &geo, {flags}, {xzp}, {ctx.scratch('float')}, threads);"
        else:
            wf = ctx.pack(f"{key}:wf", wm.astype(np.float32))
            call = f"be_qdwconv2d_i8({x}, {wf}, {y}, &ep, &geo, {xzp}, {ctx.scratch('float')}, threads);"
    else:
        b = bias.astype(np.int64).reshape(m) if bias is not None else np.zeros(m, np.int64)
        b = _wrap32(b - xzp * wm.sum(axis=1))  # padding and inputs both read raw: fold -x_zp * sum(w) in
        if kind == "nhwc":  # B panels of the (KH*KW*C) x M matrix, k ordered (ky, kx, c)
            epi = _epi(ctx, key, node, b, m, True, yzp)
            wk_t = w.astype(np.int8).reshape(m, f[1], f[6], f[7]).transpose(2, 3, 1, 0).reshape(-1, m)
            wk = ctx.pack(f"{key}:wb", pack_b_pairs(wk_t))
            call = f"be_qconv_nhwc_i8({x}, {wk}, {y}, &ep, &geo, {flags}, {xzp}, {ctx.scratch('int8_t')}, threads);"
        else:
            epi = _epi(ctx, key, node, b, m, False, yzp)
            mats = wm.reshape(g, m // g, -1)
            wk = ctx.pack(f"{key}:w", np.concatenate([pack_a_pairs(mg) for mg in mats]))
            call = f"be_qconv2d_i8({x}, {wk}, {y}, &ep, &geo, {xzp}, {ctx.scratch('int8_t')}, threads);"
    return "\n".join(["{", f"  {geo}", f"  const be_qepi ep = {epi};", f"  {call}", "}"])


# -- QMatMul --------------------------------------------------------------------------------------------------------
def _qmm_scratch(graph: Graph, node: Node) -> int:
    k = graph.values[node.inputs[1]].shape[0]
    return MAX_THREADS * ((k + 1) // 2) * QMR * 4 + 64


@lower("QMatMul", domain="burnedge", scratch=_qmm_scratch)
def qmatmul(ctx: Ctx, node: Node) -> str:
    a_name, b_name, bias_name, y_name = node.inputs[0], node.inputs[1], _input(node, 2), node.outputs[0]
    _require_i8(ctx, [a_name, b_name, y_name])
    b = ctx.const(b_name)
    ctx.require(b is not None and b.ndim == 2, "the weights must be a constant matrix [K, N]")
    bias = ctx.const(bias_name) if bias_name else None
    ctx.require(not bias_name or bias is not None, "the bias must be constant")
    k, n = b.shape
    ctx.require(ctx.shape(a_name)[-1] == k, "the inner dimensions differ")
    rows = ctx.size(a_name) // max(k, 1)
    key = f"q:mm:{y_name}"
    azp = int(attr(node, "a_zero_point", 0))
    bias = bias.astype(np.int64).reshape(n) if bias is not None else None
    if azp:  # sum (a - a_zp) * b = sum a * b - a_zp * colsum(b): A stays raw int8 (the sdot tile's quads)
        bias = _wrap32((0 if bias is None else bias) - azp * b.astype(np.int64).sum(axis=0)).astype(np.int64)
    epi = _epi(ctx, key, node, bias, n, True, int(attr(node, "y_zero_point", 0)))
    bp = ctx.pack(f"{key}:b", pack_b_pairs(b.astype(np.int8)))
    a, y = ctx.tensor(a_name), ctx.tensor(y_name)
    call = f"be_qgemm_i8({rows}, {n}, {k}, {a}, {k}, 0, {bp}, {y}, {n}, &ep, {ctx.scratch('int16_t')}, threads);"
    return "\n".join(["{", f"  const be_qepi ep = {epi};", f"  {call}", "}"])


# -- QAdd / QMul ----------------------------------------------------------------------------------------------------
def _merged_strides(shapes: list[tuple[int, ...]], out: tuple[int, ...]) -> tuple[list[int], list[list[int]]]:
    """Output dims and each operand's element strides (0 = broadcast), size-1 dims dropped, contiguous runs merged."""
    nd = len(out)
    strides = []
    for shape in shapes:
        full = (1,) * (nd - len(shape)) + tuple(shape)
        st, acc = [0] * nd, 1
        for d in range(nd - 1, -1, -1):
            st[d] = acc if full[d] != 1 else 0
            acc *= full[d]
        strides.append(st)
    dims = [d for d in range(nd) if out[d] != 1]
    shape = [out[d] for d in dims]
    sts = [[s[d] for d in dims] for s in strides]
    i = len(shape) - 1
    while i > 0:  # merge dim i-1 into i when every operand steps through both as one
        if all(s[i - 1] == s[i] * shape[i] for s in sts):
            shape[i] *= shape[i - 1]
            for s in sts:
                del s[i - 1]
            del shape[i - 1]
        i -= 1
    return shape, sts


@lower("QAdd", "QMul", domain="burnedge")
def qbinary(ctx: Ctx, node: Node) -> str:
    a_name, b_name, y_name = node.inputs[0], node.inputs[1], node.outputs[0]
    _require_i8(ctx, [a_name, b_name, y_name])
    out = ctx.shape(y_name)
    if ctx.size(y_name) == 0:
        return "/* empty */"
    shape, (sa, sb) = _merged_strides([ctx.shape(a_name), ctx.shape(b_name)], out)
    if not shape:
        shape, sa, sb = [1], [0], [0]
    lo, hi = int(attr(node, "y_min", -128)), int(attr(node, "y_max", 127))
    ctx.require(-128 <= lo <= hi <= 127, f"[y_min, y_max] = [{lo}, {hi}] is not inside int8")
    zps = [int(attr(node, k, 0)) for k in ("a_zero_point", "b_zero_point", "y_zero_point")]
    if node.op_type == "QAdd":
        am, bm, shift = (int(node.attrs[k]) for k in ("a_multiplier", "b_multiplier", "shift"))
        ctx.require(0 <= am < 2**31 and 0 <= bm < 2**31, "QAdd multipliers must lie in [0, 2^31)")
        ctx.require(1 <= shift <= 62, f"QAdd shift {shift} is outside 1..62")
        params = f"{{BE_QADD, {zps[0]}, {zps[1]}, {zps[2]}, {am}, {bm}, {shift}, 0, 32, 1, {lo}, {hi}}}"
    else:
        m, s, lim = (int(v[0]) for v in rq_params(node.attrs["multiplier"], node.attrs["shift"], 1))
        params = f"{{BE_QMUL, {zps[0]}, {zps[1]}, {zps[2]}, 0, 0, 1, {m}, {s}, {lim}, {lo}, {hi}}}"
    arr = ", ".join
    return "\n".join([
        "{",
        f"  static const long shape[] = {{{arr(map(str, shape))}}}, sa[] = {{{arr(map(str, sa))}}}, "
        f"sb[] = {{{arr(map(str, sb))}}};",
        f"  static const be_qbin p = {params};",
        f"  be_qbinary_i8({ctx.tensor(a_name)}, {ctx.tensor(b_name)}, {ctx.tensor(y_name)}, {len(shape)}, shape, sa, "
        "sb, &p, threads);",
        "}",
    ])  # fmt: skip


# -- QLut / QRequant ------------------------------------------------------------------------------------------------
@lower("QLut", domain="burnedge")
def qlut(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    _require_i8(ctx, [x, y])
    table = np.asarray(node.attrs["table"], np.int64)
    ctx.require(table.shape == (256,), "QLut needs a table of 256 values")
    t = ctx.pack(f"q:lut:{y}", table.astype(np.int8))
    return f"be_qlut_i8({ctx.tensor(x)}, {ctx.tensor(y)}, {t}, {ctx.size(y)}, threads);"


@lower("QRequant", domain="burnedge")
def qrequant(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    _require_i8(ctx, [x, y])
    m, s, lim = (int(v[0]) for v in rq_params(node.attrs["multiplier"], node.attrs["shift"], 1))
    xzp, yzp = int(attr(node, "x_zero_point", 0)), int(attr(node, "y_zero_point", 0))
    return f"be_qrequant_i8({ctx.tensor(x)}, {ctx.tensor(y)}, {ctx.size(y)}, {xzp}, {yzp}, {m}, {s}, {lim}, threads);"


# -- QSoftmax / pools -----------------------------------------------------------------------------------------------
@lower("QSoftmax", domain="burnedge")
def qsoftmax(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    _require_i8(ctx, [x, y])
    shape = ctx.shape(x)
    ctx.require(len(shape) >= 1, "QSoftmax needs an input of rank >= 1")
    axis = int(attr(node, "axis", -1)) % len(shape)
    table = np.asarray(node.attrs["table"], np.int64)
    ctx.require(table.shape == (256,), "QSoftmax needs a table of 256 values")
    if ctx.size(x) == 0:
        return "/* empty */"
    t = ctx.pack(f"q:softmax:{y}", table.astype(np.int32))
    outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1 :])
    return f"be_qsoftmax_i8({ctx.tensor(x)}, {ctx.tensor(y)}, {outer}, {shape[axis]}, {inner}, {t}, threads);"


def _qglobal(ctx: Ctx, x: str, y: str, zp: int) -> str:
    shape = ctx.shape(x)
    nc = shape[0] * shape[1]
    if nc == 0:
        return "/* empty */"
    if x in nhwc_int8_tensors(ctx.graph):  # (N, H, W, C) in the arena
        size = ctx.size(x) // nc
        return f"be_qglobal_avgpool_nhwc_i8({ctx.tensor(x)}, {ctx.tensor(y)}, {shape[0]}, {size}, {shape[1]}, {zp});"
    return f"be_qglobal_avgpool_i8({ctx.tensor(x)}, {ctx.tensor(y)}, {nc}, {ctx.size(x) // nc}, {zp}, threads);"


@lower("QGlobalAvgPool", domain="burnedge")
def qglobal_avg_pool(ctx: Ctx, node: Node) -> str:
    _require_i8(ctx, [node.inputs[0], node.outputs[0]])
    ctx.require(len(ctx.shape(node.inputs[0])) >= 2, "a global pool needs an input of rank >= 2")
    return _qglobal(ctx, node.inputs[0], node.outputs[0], int(attr(node, "zero_point", 0)))


@lower("QAvgPool", domain="burnedge")
def qavg_pool(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    _require_i8(ctx, [x, y])
    zp = int(attr(node, "zero_point", 0))
    window = pool_window(ctx, node)
    if window is None:
        return "/* empty */"
    if window == "global":
        return _qglobal(ctx, x, y, zp)
    args = [*window, zp]
    return f"be_qavgpool2d_i8({ctx.tensor(x)}, {ctx.tensor(y)}, {', '.join(map(str, args))}, threads);"


# -- QuantizeLinear / DequantizeLinear ------------------------------------------------------------------------------
def _qdq_layout(ctx: Ctx, node: Node, x_name: str) -> tuple[int, int, int, np.ndarray, np.ndarray]:
    """(outer, C, inner, float32 scales [C], int32 zero points [C]) of a per-tensor or per-axis Q/DQ node."""
    ctx.require(int(attr(node, "block_size", 0) or 0) == 0, "blocked quantization is not supported")
    scale = ctx.const(node.inputs[1])
    ctx.require(scale is not None and scale.dtype == np.float32, "the scale must be a float32 constant")
    zp_name = _input(node, 2)
    zp = ctx.const(zp_name) if zp_name else np.zeros(scale.shape, np.int32)
    ctx.require(zp is not None, "the zero point must be constant")
    shape = ctx.shape(x_name)
    if scale.size == 1 and scale.ndim <= 1:
        outer, c, inner = 1, 1, ctx.size(x_name)
    else:
        ctx.require(scale.ndim == 1 and len(shape) > 0, "only per-tensor and per-axis scales are supported")
        axis = int(attr(node, "axis", 1)) % len(shape)
        ctx.require(scale.shape[0] == shape[axis], "the scale does not match the quantization axis")
        outer, c, inner = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])
    scales = np.broadcast_to(scale.reshape(-1), (c,)).astype(np.float32)
    zps = np.broadcast_to(np.asarray(zp).astype(np.int64).reshape(-1), (c,)).astype(np.int32)
    return outer, c, inner, scales, zps


@lower("QuantizeLinear")
def quantize_linear(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    ctx.require(ctx.dtype(x) == np.float32, f"QuantizeLinear of {ctx.dtype(x)}: only float32 is supported")
    out = ctx.dtype(y).name
    ctx.require(out in ("int8", "uint8"), f"QuantizeLinear to {out}: only int8 and uint8 are supported")
    outer, c, inner, scales, zps = _qdq_layout(ctx, node, x)
    if ctx.size(y) == 0:
        return "/* empty */"
    s, z = ctx.pack(f"q:quant:{y}:s", scales), ctx.pack(f"q:quant:{y}:zp", zps)
    fn = "be_quantize_f32_i8" if out == "int8" else "be_quantize_f32_u8"
    return f"{fn}({ctx.tensor(x)}, {ctx.tensor(y)}, {outer}, {c}, {inner}, {s}, {z}, threads);"


@lower("DequantizeLinear")
def dequantize_linear(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    src = ctx.dtype(x).name
    ctx.require(src in ("int8", "uint8", "int32"), f"DequantizeLinear of {src}: only int8, uint8, int32")
    ctx.require(ctx.dtype(y) == np.float32, f"DequantizeLinear to {ctx.dtype(y)}: only float32 is supported")
    outer, c, inner, scales, zps = _qdq_layout(ctx, node, x)
    if ctx.size(y) == 0:
        return "/* empty */"
    s, z = ctx.pack(f"q:dequant:{y}:s", scales), ctx.pack(f"q:dequant:{y}:zp", zps)
    fn = {"int8": "be_dequantize_i8_f32", "uint8": "be_dequantize_u8_f32", "int32": "be_dequantize_i32_f32"}[src]
    return f"{fn}({ctx.tensor(x)}, {ctx.tensor(y)}, {outer}, {c}, {inner}, {s}, {z}, threads);"
