"""The QConv lowering: per-plane depthwise, channels-last depthwise, channels-last implicit GEMM, or im2col + GEMM
(kernels qconv.c, qconv_nhwc.c), chosen from the constant shapes and the int8 layout (layout.py)."""

from __future__ import annotations

import numpy as np

from ....ir import Graph, Node
from . import Ctx, lower
from .layout import DW_MAX_TAPS, conv_fields, dw_mult1, nhwc_int8_tensors, nhwc_qconv
from .qscratch import PAR_MIN_QMACS, kernel_threads, lean, plan_threads
from .quantized import MAX_THREADS, QMR, QNR, opt_input, pack_a_pairs, pack_b_pairs, qepi, require_i8, wrap32
from .reduce import attr

__all__ = ["qconv"]


DWC_BAND_FLOATS = 8192  # qconv.h be_qdw_nhwc_band: the padded float band a job aims at (32 KiB)


def _dwc_row_floats(f: list[int]) -> int:
    """Floats of the smallest band of the channels-last depthwise kernel (one output row: its KH input rows)."""
    c, kh, kw, sw, dh, dwl, ow = f[1], f[6], f[7], f[9], f[10], f[11], f[15]
    return ((kh - 1) * dh + 1) * ((ow - 1) * sw + (kw - 1) * dwl + 1) * (-(-c // 8) * 8)


def _qconv_geo(graph: Graph, node: Node) -> tuple[str, list[int], int] | None:
    """(kind, be_qconv_geo fields, NHWC flags), None for shapes the kernels do not take. Kinds: "dwc" (channels-last
    depthwise, multiplier 1), "nhwc" (channels-last implicit GEMM, one group; also
    between NCHW tensors for stems of <= 4 input channels), "dw" (per-plane depthwise, other
    multipliers; and multiplier 1 between NCHW tensors when even one output row of "dwc" overflows its band: wide
    rows of many channels, whose float copy would be MBs per thread), "gemm" (im2col + GEMM, any group)."""
    fields = conv_fields(graph, node)
    if fields is None:
        return None
    w = graph.values[node.inputs[1]].shape
    group, kernel = fields[5], fields[6:8]
    flags = 0
    if nhwc_qconv(graph, node):
        nhwc = nhwc_int8_tensors(graph)
        flags = (1 if node.inputs[0] in nhwc else 0) | (2 if node.outputs[0] in nhwc else 0)
        if dw_mult1(fields, w) and (flags or _dwc_row_floats(fields) <= DWC_BAND_FLOATS):
            return "dwc", fields, flags
        if flags or (group == 1 and fields[1] <= 4):  # NCHW stems too: pixel rows beat im2col's byte gathers
            return "nhwc", fields, flags
    dw = w[1] == 1 and group > 1 and group == fields[1] and kernel[0] * kernel[1] <= DW_MAX_TAPS
    return ("dw" if dw else "gemm"), fields, flags


def _band(graph: Graph, kind: str, f: list[int]) -> int:
    """Output rows per band of the channels-last kernels (qconv.h be_qdw_nhwc_band, be_qconv_nhwc_band): one row
    in a lean plan (the geo's `band` field tells the kernel), else what the kernel's budget gives (~32 KiB of
    floats for "dwc", a ~64 KiB copy for "nhwc")."""
    c, kh, sh, dh, oh = f[1], f[6], f[8], f[10], f[14]
    if lean(graph) or kind not in ("dwc", "nhwc"):
        return 1
    wp, halo = (f[15] - 1) * f[9] + (f[7] - 1) * f[11] + 1, (kh - 1) * dh + 1
    row, budget = (wp * (-(-c // 8) * 8), 8192) if kind == "dwc" else (wp * c, 65536)
    return min(oh, (budget // row - halo) // sh + 1 if budget // row > halo else 1)


def _qconv_scratch(graph: Graph, node: Node) -> int:
    """Bytes of the kernel's scratch (qconv.h), with as many thread slices as its driver can use."""
    info = _qconv_geo(graph, node)
    if info is None:
        return 0
    kind, f, flags = info
    n, c, h, wd, m, g, kh, kw, sh, sw, dh, dwl, ph, pw, oh, ow = f
    ohw, taps = oh * ow, kh * kw
    band = _band(graph, kind, f)
    if kind == "dwc":  # be_qdw_nhwc_scratch: a band of ~32 KiB of padded floats per thread
        wp, c8 = (ow - 1) * sw + (kw - 1) * dwl + 1, -(-c // 8) * 8
        row = wp * c8
        rin = (band - 1) * sh + (kh - 1) * dh + 1
        nt = kernel_threads(n * ohw * c * taps, 100000, n * -(-oh // band), graph)
        return (nt * (-(-(rin * row) // 16) * 16) + 64) * 4
    if kind == "nhwc":  # be_qconv_nhwc_scratch: the padded copy of a band of ~64 KiB + a row panel per thread
        k = c * taps
        panel = (k + 3) // 4 * 2 * QMR * 4 + 64
        direct = flags & 1 and (kh, kw, sh, sw, ph, pw, oh, ow) == (1, 1, 1, 1, 0, 0, h, wd)  # rows read in place
        row, halo = ((ow - 1) * sw + (kw - 1) * dwl + 1) * c, (kh - 1) * dh + 1
        copy = 0 if direct else -(-(((band - 1) * sh + halo) * row + 64) // 64) * 64
        nt = kernel_threads(ohw * m * k, PAR_MIN_QMACS, -(-ohw // QMR), graph)
        return copy + nt * (-(-(QMR * k + 64 + QMR * m + 64 + panel) // 64) * 64) + 64
    if kind == "dw":  # be_qdwconv_scratch: one padded plane per thread
        wp = (ow - 1) * sw + (kw - 1) * dwl + 1
        row = max(-(-wp // sw), (ow + 7) // 8 * 8 + (kw - 1) * dwl // sw + 8)
        hp = (oh - 1) * sh + (kh - 1) * dh + 1
        return (plan_threads(graph) * ((hp + 1) * sw * row + 16) + 64) * 4
    k = c // g * taps  # be_qconv_scratch: a K x 16 block and nb column panels per thread
    k2, k4 = (k + 1) // 2, (k + 3) // 4
    nb = max(1, min(16, 16384 // (k2 * 32)))
    panels, mp = -(-ohw // QNR), -(-(m // g) // QMR)
    blocks = n * g * -(-panels // nb)
    jobs = blocks * (min(mp, MAX_THREADS) if blocks < 2 * MAX_THREADS else 1)
    nt = kernel_threads(n * m * ohw * k, PAR_MIN_QMACS, jobs, graph)
    return nt * (k * QNR + nb * k4 * 64 + k4 * 24 + 64) + 64


@lower("QConv", domain="burnedge", scratch=_qconv_scratch)
def qconv(ctx: Ctx, node: Node) -> str:
    x_name, w_name, b_name, y_name = node.inputs[0], node.inputs[1], opt_input(node, 2), node.outputs[0]
    require_i8(ctx, [x_name, w_name, y_name])
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
    band = 1 if lean(ctx.graph) and kind in ("dwc", "nhwc") else 0  # 0: the kernel's own band
    geo = "static const be_qconv_geo geo = {" + ", ".join(map(str, [*f, band])) + "};"
    x, y = ctx.tensor(x_name), ctx.tensor(y_name)
    if kind in ("dw", "dwc"):
        b = bias.astype(np.int64).reshape(m) if bias is not None else None
        epi = qepi(ctx, key, node, b, m, kind == "dwc", yzp)  # dwc: channel arrays padded to 16
        if kind == "dwc":  # [tap][C8]
            c8 = -(-m // 8) * 8
            wf = ctx.pack(f"{key}:wf", np.pad(wm.T, ((0, 0), (0, c8 - m))).astype(np.float32))
            call = f"be_qdwconv_nhwc_i8({x}, {wf}, {y}, &ep, &geo, {flags}, {xzp}, {ctx.scratch('float')}, threads);"
        else:
            wf = ctx.pack(f"{key}:wf", wm.astype(np.float32))
            call = f"be_qdwconv2d_i8({x}, {wf}, {y}, &ep, &geo, {xzp}, {ctx.scratch('float')}, threads);"
    else:
        b = bias.astype(np.int64).reshape(m) if bias is not None else np.zeros(m, np.int64)
        b = wrap32(b - xzp * wm.sum(axis=1))  # padding and inputs both read raw: fold -x_zp * sum(w) in
        if kind == "nhwc":  # B panels of the (KH*KW*C) x M matrix, k ordered (ky, kx, c)
            epi = qepi(ctx, key, node, b, m, True, yzp)
            wk_t = w.astype(np.int8).reshape(m, f[1], f[6], f[7]).transpose(2, 3, 1, 0).reshape(-1, m)
            wk = ctx.pack(f"{key}:wb", pack_b_pairs(wk_t))
            call = f"be_qconv_nhwc_i8({x}, {wk}, {y}, &ep, &geo, {flags}, {xzp}, {ctx.scratch('int8_t')}, threads);"
        else:
            epi = qepi(ctx, key, node, b, m, False, yzp)
            mats = wm.reshape(g, m // g, -1)
            wk = ctx.pack(f"{key}:w", np.concatenate([pack_a_pairs(mg) for mg in mats]))
            call = f"be_qconv2d_i8({x}, {wk}, {y}, &ep, &geo, {xzp}, {ctx.scratch('int8_t')}, threads);"
    return "\n".join(["{", f"  {geo}", f"  const be_qepi ep = {epi};", f"  {call}", "}"])
