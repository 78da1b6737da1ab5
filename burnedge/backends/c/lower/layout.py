"""Which tensors the C backend stores channels-last: the whole-graph layout decisions the conv, pool and int8
lowerings share (each asks the same function, so the scratch callback and every lowering agree).

Float: a tensor that one conv writes and only convs read (as their input or fused residual) or global pools (a
classifier head), and that is no graph output, lives in the arena as NHWC (N, H, W, C; N, L, C in 1-D) instead of
NCHW (`nhwc_tensors`); a windowed max pool between two such convs follows them. int8: QConvs, whole-input average
pools, windowed max pools and layout-free elementwise ops keep channels-last int8 tensors between them
(`nhwc_int8_tensors`). Both are computed once per graph (`per_graph`).
"""

from __future__ import annotations

import numpy as np

from ....ir import Graph, Node
from ....ops._im2col import attr_list, geometry
from ....ops.conv import _geo as conv_geometry
from . import per_graph
from .reduce import attr

__all__ = [
    "CONV_OPS",
    "DW_MAX_TAPS",
    "conv_fields",
    "conv_geo",
    "covers_input",
    "dw_mult1",
    "nhwc_capable",
    "nhwc_global_pool",
    "nhwc_int8_tensors",
    "nhwc_max_pool",
    "nhwc_qconv",
    "nhwc_tensors",
    "pool_geometry",
]

DW_MAX_TAPS = 512  # qconv.h: float sums of at most 512 products are exact


# -- float: convs and the pools that read them ------------------------------------------------------------------------
CONV_OPS = {("", "Conv"), ("burnedge", "FusedConv")}


def conv_fields(graph: Graph, node: Node) -> list[int] | None:
    """The be_conv_geo / be_qconv_geo fields of a 1-D or 2-D conv node (a 1-D conv is a 2-D conv of height 1):
    N, C, H, W, M, group, kernel, strides, dilations, padding begin, output size; None for other ranks."""
    x, w = graph.values[node.inputs[0]].shape, graph.values[node.inputs[1]].shape
    if len(x) not in (3, 4):
        return None
    a = node.attrs
    kernel, strides, dil, geo = conv_geometry(
        x, w, a.get("kernel_shape"), a.get("strides"), a.get("dilations"), a.get("pads"), a.get("auto_pad", "NOTSET")
    )
    group = int(a.get("group", 1))
    if len(x) == 3:  # 1-D: a 2-D conv of height 1
        x, kernel, strides, dil = (*x[:2], 1, x[2]), [1, *kernel], [1, *strides], [1, *dil]
        begin, out = [0, *geo.begin], [1, *geo.out]
    else:
        begin, out = geo.begin, geo.out
    n, c, h, wd = x
    return [n, c, h, wd, w[0], group, *kernel, *strides, *dil, *begin, *out]


def conv_geo(graph: Graph, node: Node) -> tuple[bool, list[int]] | None:
    """(depthwise?, be_conv_geo fields) of a Conv / FusedConv, None for shapes the kernels do not take."""
    fields = conv_fields(graph, node)
    if fields is None:
        return None
    w = graph.values[node.inputs[1]].shape
    return (w[1] == 1 and fields[5] > 1), fields


def nhwc_capable(graph: Graph, node: Node) -> bool:
    """A conv the NHWC kernels run: float32, constant weights, 1-D/2-D, one group or depthwise with multiplier 1."""
    if (node.op.domain, node.op.name) not in CONV_OPS or len(node.inputs) < 2 or not node.inputs[1]:
        return False
    vals = graph.values
    names = [n for n in [*node.inputs, *node.outputs] if n]
    if not vals[node.inputs[1]].is_const or any(vals[n].dtype != np.float32 for n in names):
        return False
    info = conv_geo(graph, node)
    if info is None:
        return False
    dw, f = info
    return f[5] == 1 or (dw and f[4] == f[1] == f[5] and f[6] * f[7] <= 64)  # conv_dwc.c: at most 64 taps


@per_graph
def nhwc_tensors(graph: Graph) -> set[str]:
    """Names of the tensors stored channels-last: written by an NHWC-capable conv (or by a windowed max pool that
    reads such a tensor, nhwc_max_pool), read only by such convs as input 0 or residual (input 3), by global pools
    (nhwc_global_pool) or by windowed max pools whose output is channels-last too, and no graph output.

    A windowed max pool keeps its input and output in one layout (the stem -> MaxPool -> first block of a ResNet):
    candidates leave until every such pool has both or neither (a fixed point: candidates only ever leave)."""
    capable = {id(n): nhwc_capable(graph, n) for n in graph.nodes}
    pools = {id(n) for n in graph.nodes if nhwc_global_pool(graph, n)}
    windows = [n for n in graph.nodes if nhwc_max_pool(graph, n, "float32")]
    window_ids = {id(n) for n in windows}
    users: dict[str, list[tuple[Node, bool]]] = {}
    for node in graph.nodes:
        for name in set(node.uses()):
            if (id(node) in pools or id(node) in window_ids) and name not in node.captures:
                users.setdefault(name, []).append((node, True))
                continue
            ok = capable[id(node)] and all(i in (0, 3) for i, x in enumerate(node.inputs) if x == name)
            ok = ok and name not in node.captures
            users.setdefault(name, []).append((node, ok))
    outs = set(graph.outputs)
    found = set()
    for node in graph.nodes:
        if capable[id(node)] or id(node) in window_ids:
            y = node.outputs[0]
            if y not in outs and users.get(y) and all(ok for _, ok in users[y]):
                found.add(y)
    changed = True
    while changed:
        changed = False
        for node in windows:
            pair = (node.inputs[0], node.outputs[0])
            if (pair[0] in found) != (pair[1] in found):
                found.difference_update(pair)
                changed = True
    return found


def nhwc_max_pool(graph: Graph, node: Node, dtype: str) -> bool:
    """A windowed 2-D MaxPool on `dtype` (float32 or int8) the channels-last kernel runs (be_maxpool2d_nhwc_f32 /
    _i8): no Indices output, not a global pool (those are nhwc_global_pool and the int8 whole-input pools)."""
    if (node.op.domain, node.op_type) != ("", "MaxPool") or (len(node.outputs) > 1 and node.outputs[1]):
        return False
    x = graph.values[node.inputs[0]]
    if x.dtype.name != dtype or len(x.shape) != 4 or 0 in x.shape:
        return False
    return not covers_input(tuple(x.shape), node)


def pool_geometry(shape: tuple[int, ...], node: Node):
    """(kernel, strides, dilations, the reference's window geometry) of a 1-D/2-D MaxPool / AveragePool node."""
    n_sp = len(shape) - 2
    kern = attr_list(attr(node, "kernel_shape"), n_sp, 1, "kernel_shape")
    strides = attr_list(attr(node, "strides"), n_sp, 1, "strides")
    dil = attr_list(attr(node, "dilations"), n_sp, 1, "dilations")
    auto_pad = attr(node, "auto_pad", "NOTSET") or "NOTSET"
    geo = geometry(shape[2:], kern, strides, dil, attr(node, "pads"), auto_pad, attr(node, "ceil_mode", 0), False)
    return kern, strides, dil, geo


def covers_input(shape: tuple[int, ...], node: Node) -> bool:
    """Whether a MaxPool / AveragePool node's one window covers its whole (1-D or 2-D) input: a global pool."""
    kern, _, _, geo = pool_geometry(shape, node)
    n_sp = len(shape) - 2
    return geo.out == [1] * n_sp and kern == list(shape[2:]) and geo.begin == geo.end == [0] * n_sp


def nhwc_global_pool(graph: Graph, node: Node) -> bool:
    """A float global pool that can read a channels-last input (nhwc_tensors lets a conv output stay NHWC for
    it): GlobalAveragePool / GlobalMaxPool, or a MaxPool / AveragePool whose one window is the whole input."""
    if node.op.domain != "" or node.op_type not in ("GlobalAveragePool", "GlobalMaxPool", "MaxPool", "AveragePool"):
        return False
    if node.op_type == "MaxPool" and len(node.outputs) > 1 and node.outputs[1]:
        return False
    x = graph.values[node.inputs[0]]
    if x.dtype.name != "float32" or len(x.shape) not in (3, 4) or 0 in x.shape:
        return False
    return node.op_type.startswith("Global") or covers_input(tuple(x.shape), node)


# -- int8: QConvs, whole-input pools and layout-free elementwise ops ------------------------------------------------
INT8_ELEMENTWISE = ("QAdd", "QMul", "QLut", "QRequant")


def dw_mult1(f: list[int], w: tuple[int, ...]) -> bool:
    return w[1] == 1 and f[5] > 1 and f[4] == f[1] == f[5] and f[6] * f[7] <= DW_MAX_TAPS


def nhwc_qconv(graph: Graph, node: Node) -> bool:
    """A QConv the channels-last kernels run (qconv_nhwc.c): constant weights, 1-D/2-D, one group or depthwise
    with multiplier 1."""
    if (node.op.domain, node.op_type) != ("burnedge", "QConv") or not node.inputs[1]:
        return False
    if not graph.values[node.inputs[1]].is_const:
        return False
    f = conv_fields(graph, node)
    return f is not None and (f[5] == 1 or dw_mult1(f, graph.values[node.inputs[1]].shape))


def _nhwc_qpool(graph: Graph, node: Node) -> bool:
    """An int8 average pool whose one window is the whole input (it reads a channels-last input too)."""
    if node.op.domain != "burnedge" or node.op_type not in ("QGlobalAvgPool", "QAvgPool"):
        return False
    shape = tuple(graph.values[node.inputs[0]].shape)
    if len(shape) not in (3, 4) or 0 in shape:
        return False
    return node.op_type == "QGlobalAvgPool" or covers_input(shape, node)


def _layout_free(graph: Graph, node: Node) -> bool:
    """An elementwise int8 op whose operands all have the output's shape: it works on bytes in any layout."""
    if node.op.domain != "burnedge" or node.op_type not in INT8_ELEMENTWISE or node.captures:
        return False
    out = tuple(graph.values[node.outputs[0]].shape)
    return all(tuple(graph.values[i].shape) == out for i in node.inputs if i)


@per_graph
def nhwc_int8_tensors(graph: Graph) -> set[str]:
    """Names of the int8 tensors stored channels-last (N, H, W, C; N, L, C in 1-D).

    1. candidates: rank-3/4 int8 outputs of channels-last QConvs, of layout-free elementwise ops and of windowed max
       pools (nhwc_max_pool), no graph output, every reader a channels-last QConv (as input 0), a whole-input
       average pool, a layout-free op or a windowed max pool;
    2. a layout-free op or a windowed max pool keeps its operands and its output in one layout: while one of them
       is not a candidate, drop them all (a fixed point: candidates only ever leave).
    """
    conv = {id(n) for n in graph.nodes if nhwc_qconv(graph, n)}
    pool = {id(n) for n in graph.nodes if _nhwc_qpool(graph, n)}
    # layout-free ops, and windowed max pools: their input and output in one layout, either one
    free = [n for n in graph.nodes if _layout_free(graph, n) or nhwc_max_pool(graph, n, "int8")]
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
