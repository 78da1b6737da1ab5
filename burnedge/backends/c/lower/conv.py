"""Conv, FusedConv and ConvTranspose on the dense kernels, with a channels-last layout between convs.

Layout: a float tensor that one conv writes and only convs read (as their input or fused residual) or global
pools (a classifier head), and that is no graph output, lives in the arena as NHWC (N, H, W, C; N, L, C in 1-D)
instead of NCHW: nothing else ever sees its bytes, and NHWC suits small planes (full 16-wide channel panels,
channel-vectorised depthwise, no im2col packing of the weights' partner). `layout.nhwc_tensors` decides it from the
graph alone, so the scratch callback and the lowering agree.

Kernels, chosen per node from the constant shapes and those layouts:
- the NHWC kernels for a conv of one group, or depthwise with multiplier 1, when its input, output or residual is
  NHWC, and for every KxK conv of one group whatever the layouts (one padded copy of the input beats im2col):
  be_conv_wino_f32 (Winograd F(2x2, 3x3): 3x3 stride 1, C % 8 == 0, C >= 32, 64+ output pixels),
  be_conv_nhwc_f32 (implicit GEMM, rows = pixels, weights as B panels, k ordered (ky, kx, c)) or
  be_dwconv_nhwc_f32 (channel-vectorised, weights [tap][C8]); an NCHW input is transposed into their padded
  copy, an NCHW output stored transposed;
- be_conv_stem_f32 for the first conv of most CNNs: KxK, one group, an NCHW input of at most 4 channels, at most
  8 output channels, no residual (vectorised along output pixels, the weights broadcast; weights in groups of 4
  output channels);
- otherwise the NCHW kernels: be_conv2d_f32 (im2col + GEMM, weights as A panels; 1x1 convs read the input in
  place) and be_dwconv2d_f32 (width-vectorised). They also take weights that arrive at run time (a graph input or
  a computed tensor), read in ONNX's layout where constant ones are packed; ConvTranspose likewise (1-D and 2-D;
  conv_transpose_nd.py runs the rest).
"""

from __future__ import annotations

import numpy as np

from ....ir import Graph, Node
from ....ops.conv_transpose import _ct_geometry
from . import Ctx, lower
from .conv_transpose_nd import conv_transpose_nd, convt_nd_scratch
from .dense import MAX_THREADS, MR, NR, _epi, _gemm_scratch_bytes, _input, _require_f32, pack_a, pack_b
from .layout import conv_geo, nhwc_capable, nhwc_tensors


def _winograd(f: list[int]) -> bool:
    """Winograd F(2x2, 3x3) for 3x3 stride-1 convs of one group with C % 8 == 0, at least 32 input channels (with
    fewer, its transforms cost more than its 2.25x fewer multiply-adds save) and 64+ output pixels (on smaller
    planes its 16/9 larger weights do)."""
    n, c, h, wd, m, g, kh, kw, sh, sw, dh, dwl, ph, pw, oh, ow = f
    return g == 1 and (kh, kw, sh, sw, dh, dwl) == (3, 3, 1, 1, 1, 1) and c % 8 == 0 and c >= 32 and oh * ow >= 64


WINO_SHARED_U = WINO_SHARED_V = 1 << 20  # conv.h: BE_WINO_SHARED_U, BE_WINO_SHARED_V (bytes)
STEM_PX = 24  # conv_stem.h: BE_STEM_PX, output pixels per tile
STEM_MAX_C = 4  # conv_stem.c: its tiles pay one load per input float per tap, so only a few input channels
STEM_MAX_M = 8  # with more output channels the NHWC tiles' 16-wide weight panels reuse each input load more


def _stem(f: list[int], dw: bool, flags: int, res: str) -> bool:
    """The stem kernel: KxK (more than one tap), one group, an NCHW input of at most 4 channels, at most 8 output
    channels, no residual."""
    c, m, g, kh, kw = f[1], f[4], f[5], f[6], f[7]
    return not dw and g == 1 and c <= STEM_MAX_C and m <= STEM_MAX_M and kh * kw > 1 and not flags & 1 and not res


def _plan(graph: Graph, node: Node) -> tuple[str, list[int], int]:
    """(kernel: "stem" | "wino" | "nhwc" | "dwc" | "gemm" | "dw", geo fields, NHWC flags) of a conv."""
    dw, f = conv_geo(graph, node)
    if nhwc_capable(graph, node):
        nhwc = nhwc_tensors(graph)
        res = node.inputs[3] if node.op.domain == "burnedge" and len(node.inputs) > 3 else ""
        flags = (1 if node.inputs[0] in nhwc else 0) | (2 if node.outputs[0] in nhwc else 0)
        if _stem(f, dw, flags, res):
            return "stem", f, flags
        if flags or (res and res in nhwc) or (not dw and f[6] * f[7] > 1):
            # NCHW on both sides too for KxK kernels: the NHWC kernels' one padded copy of the input beats im2col
            return ("dwc" if dw else "wino" if _winograd(f) else "nhwc"), f, flags
    return ("dw" if dw else "gemm"), f, 0


def _conv_scratch(graph: Graph, node: Node) -> int:
    if conv_geo(graph, node) is None:
        return 0
    kind, f, flags = _plan(graph, node)
    n, c, h, wd, m, g, kh, kw, sh, sw, dh, dwl, ph, pw, oh, ow = f
    c8 = -(-c // 8) * 8
    if kind == "stem":  # conv_stem.h: be_conv_stem_scratch
        hp = (oh - 1) * sh + (kh - 1) * dh + 1
        tiles = -(-ow // STEM_PX) * STEM_PX
        wq = max(tiles + (kw - 1) * dwl // sw + 1, -(-(pw + wd) // sw)) + 1
        return (c * hp * sw * wq + c * kh * kw + 64) * 4
    if kind == "nhwc":  # conv.h: be_conv_nhwc_scratch
        hp = max((oh - 1) * sh + (kh - 1) * dh + 1, ph + h)
        wpad = max((ow - 1) * sw + (kw - 1) * dwl + 1, pw + wd)
        padded = not (flags & 1 or c == 1) or hp != h or wpad != wd
        img = -(-n * hp * wpad * c // 16) * 16 if padded else 0
        return (img + -(-c * kh * kw // 16) * 16 + MAX_THREADS * 8 * NR) * 4
    if kind == "wino":  # conv.h: be_conv_wino_scratch (and be_conv_wino_shared)
        hp, wpad = max((oh + 1) // 2 * 2 + 2, ph + h), max((ow + 1) // 2 * 2 + 2, pw + wd)
        img = -(-n * hp * wpad * c // 16) * 16
        vall = n * -(-((oh + 1) // 2 * ((ow + 1) // 2)) // MR) * 16 * MR * c
        if 64 * c * m > WINO_SHARED_U and 4 * vall <= WINO_SHARED_V:
            return (img + vall + MAX_THREADS * 32 * MR * NR) * 4
        return (img + MAX_THREADS * 16 * MR * (c + 2 * NR)) * 4
    if kind == "dwc":  # conv.h: be_dwconv_nhwc_scratch
        wpad = max((ow - 1) * sw + (kw - 1) * dwl + 1, pw + wd)
        row, halo = wpad * c8, (kh - 1) * dh + 1
        band = min(oh, (8192 // row - halo) // sh + 1 if 8192 // row > halo else 1)
        rin = (band - 1) * sh + (kh - 1) * dh + 1
        return MAX_THREADS * ((rin * wpad + (0 if flags & 2 else band * ow)) * c8 + 16) * 4
    if kind == "dw":
        wp = (ow - 1) * sw + (kw - 1) * dwl + 1
        row = max(-(-wp // sw), (ow + 7) // 8 * 8 + (kw - 1) * dwl // sw)
        hp = (oh - 1) * sh + (kh - 1) * dh + 1
        return (MAX_THREADS * hp * sw * row + 64) * 4
    return _gemm_scratch_bytes(c // g * kh * kw)


@lower("Conv", scratch=_conv_scratch)
@lower("FusedConv", domain="burnedge", scratch=_conv_scratch)
def conv(ctx: Ctx, node: Node) -> str:
    _require_f32(ctx, node)
    ctx.require(conv_geo(ctx.graph, node) is not None, "only 1-D and 2-D convolutions are supported")
    kind, f, flags = _plan(ctx.graph, node)
    w = ctx.const(node.inputs[1])  # None: run-time weights, which only the NCHW kernels read unpacked
    c, m, g, kh, kw = f[1], f[4], f[5], f[6], f[7]
    ohw = f[14] * f[15]
    if w is not None:
        w = w.astype(np.float32).reshape(m, -1, kh, kw)
    bias, res = _input(node, 2), _input(node, 3) if node.op.domain == "burnedge" else ""
    res_nhwc = bool(res) and res in nhwc_tensors(ctx.graph)
    if kind in ("nhwc", "wino", "dwc", "stem"):  # rows = pixels, columns = channels
        s0, s1 = (0, 1), ((m, 1) if res_nhwc else (1, ohw))
    else:  # rows = channels, columns = pixels
        s0, s1 = (1, 0), ((1, m) if res_nhwc else (ohw, 1))
    epi = _epi(ctx, node, add0=ctx.tensor(bias) if bias else "0", s0=s0,
               add1=ctx.tensor(res) if res else "0", s1=s1)  # fmt: skip
    x, y = ctx.tensor(node.inputs[0]), ctx.tensor(node.outputs[0])
    geo = "static const be_conv_geo geo = {" + ", ".join(map(str, f)) + "};"
    key = node.inputs[1]
    if kind == "stem":
        m4 = -(-m // 4) * 4
        groups = np.zeros((m4, c * kh * kw), np.float32)
        groups[:m] = w.reshape(m, -1)  # k ordered (c, ky, kx)
        wk = ctx.pack(f"dense:stem:{key}", groups.reshape(m4 // 4, 4, -1).transpose(0, 2, 1).copy())
        call = f"be_conv_stem_f32({x}, {wk}, {y}, &ep, &geo, {flags}, {ctx.scratch()}, threads);"
    elif kind == "nhwc":
        mat = w.transpose(2, 3, 1, 0).reshape(-1, m)  # (KH*KW*C, M), k ordered (ky, kx, c)
        wk = ctx.pack(f"dense:convB:{key}", pack_b(mat))
        call = f"be_conv_nhwc_f32({x}, {wk}, {y}, &ep, &geo, {flags}, {ctx.scratch()}, threads);"
    elif kind == "wino":
        gm = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], np.float64)
        u = np.einsum("ik,mckl,jl->ijcm", gm, w.astype(np.float64), gm).reshape(16, c, m).astype(np.float32)
        wk = ctx.pack(f"dense:wino:{key}", np.concatenate([pack_b(ux) for ux in u]))
        call = f"be_conv_wino_f32({x}, {wk}, {y}, &ep, &geo, {flags}, {ctx.scratch()}, threads);"
    elif kind == "dwc":
        c8 = -(-c // 8) * 8
        mat = np.zeros((kh * kw, c8), np.float32)
        mat[:, :c] = w.reshape(c, kh * kw).T
        wk = ctx.pack(f"dense:dwc:{key}", mat)
        call = f"be_dwconv_nhwc_f32({x}, {wk}, {y}, &ep, &geo, {flags}, {ctx.scratch()}, threads);"
    elif kind == "dw":  # the kernel reads ONNX's layout: run-time weights as they are
        wk = ctx.pack(f"dense:dw:{key}", w.reshape(m, -1)) if w is not None else ctx.tensor(key)
        call = f"be_dwconv2d_f32({x}, {wk}, {y}, &ep, &geo, {ctx.scratch()}, threads);"
    else:
        if w is not None:
            mats = w.reshape(g, m // g, -1)
            wk = ctx.pack(f"dense:conv:{key}:{g}", np.concatenate([pack_a(mg) for mg in mats]))
        else:
            wk = ctx.tensor(key)
        call = f"be_conv2d_f32({x}, {wk}, {int(w is not None)}, {y}, &ep, &geo, {ctx.scratch()}, threads);"
    return "\n".join(["{", f"  {geo}", f"  const be_epi ep = {epi};", f"  {call}", "}"])


# -- ConvTranspose --------------------------------------------------------------------------------------------------
def _convt_geo(graph: Graph, node: Node) -> list[int] | None:
    x, w = graph.values[node.inputs[0]].shape, graph.values[node.inputs[1]].shape
    if len(x) not in (3, 4):
        return None
    a = node.attrs
    group = int(a.get("group", 1))
    kernel, strides, dil, _full, begin, out = _ct_geometry(
        x, w, a.get("auto_pad", "NOTSET"), a.get("dilations"), group, a.get("kernel_shape"),
        a.get("output_padding"), a.get("output_shape"), a.get("pads"), a.get("strides"),
    )  # fmt: skip
    if len(x) == 3:
        x, kernel, strides, dil = (*x[:2], 1, x[2]), [1, *kernel], [1, *strides], [1, *dil]
        begin, out = [0, *begin], [1, *out]
    n, c, h, wd = x
    return [n, c, h, wd, w[1] * group, group, *kernel, *strides, *dil, *begin, *out]


def _convt_nd(graph: Graph, node: Node) -> bool:
    """Whether conv_transpose_nd.py runs the node: 3-D, float64, or an output offset before the first input."""
    f = _convt_geo(graph, node)
    return f is None or graph.values[node.inputs[0]].dtype == np.float64 or min(f[12], f[13]) < 0


def _convt_scratch(graph: Graph, node: Node) -> int:
    if _convt_nd(graph, node):
        return convt_nd_scratch(graph, node)
    f = _convt_geo(graph, node)
    n, c, h, wd, m, g, kh, kw = f[:8]
    return (m // g * kh * kw * h * wd) * 4 + _gemm_scratch_bytes(c // g)


@lower("ConvTranspose", scratch=_convt_scratch)
def conv_transpose(ctx: Ctx, node: Node) -> str:
    if _convt_nd(ctx.graph, node):
        return conv_transpose_nd(ctx, node)
    _require_f32(ctx, node)
    f = _convt_geo(ctx.graph, node)
    w = ctx.const(node.inputs[1])
    c, g = f[1], f[5]
    if w is not None:
        wt = w.astype(np.float32).reshape(g, c // g, -1).transpose(0, 2, 1)  # (G, Mg*KK, Cg)
        wk = ctx.pack(f"dense:convt:{node.inputs[1]}:{g}", np.concatenate([pack_a(mat) for mat in wt]))
    else:  # run-time weights: the kernel reads ONNX's layout
        wk = ctx.tensor(node.inputs[1])
    bias = _input(node, 2)
    x, y = ctx.tensor(node.inputs[0]), ctx.tensor(node.outputs[0])
    geo = "static const be_conv_geo geo = {" + ", ".join(map(str, f)) + "};"
    b = ctx.tensor(bias) if bias else "0"
    call = f"be_convt2d_f32({x}, {wk}, {int(w is not None)}, {b}, {y}, &geo, {ctx.scratch()}, threads);"
    return "\n".join(["{", f"  {geo}", f"  {call}", "}"])
