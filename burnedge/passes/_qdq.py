"""Helpers of the QDQ folding pass: reading Q/DQ parameters, exact int8 weights, add multipliers, uint8 -> int8.

Who owns what: every function here reads the graph; only `signed_activations` rewrites it (zero points and the
dtype of the uint8 values it converts).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Node, Value

__all__ = ["Act", "add_multipliers", "exact_int8", "per_tensor_qparams", "signed_activations"]

_I8 = np.dtype(np.int8)
_U8 = np.dtype(np.uint8)
_MIN_SCALE = float(np.finfo(np.float32).tiny)


@dataclass(frozen=True)
class Act:
    """An int8 activation: the name of its int8 value, its per-tensor scale and zero point."""

    name: str
    scale: float  # a float32 value, held as a Python float (exact)
    zero_point: int

    def same_params(self, other: Act) -> bool:
        return self.scale == other.scale and self.zero_point == other.zero_point


def per_tensor_qparams(graph: Graph, node: Node) -> tuple[float, int, np.dtype] | str:
    """(scale, zero point, integer dtype) of a QuantizeLinear / DequantizeLinear with constant per-tensor
    parameters, or why not. A missing zero point means 0 of the node's integer type."""
    if node.attrs.get("block_size", 0):
        return "blocked quantization"
    scale = graph.values[node.inputs[1]].data
    if scale is None or scale.size != 1 or scale.dtype != np.float32:
        return "its scale is not one constant float32"
    zp_name = node.inputs[2] if len(node.inputs) > 2 else ""
    if zp_name:
        zp = graph.values[zp_name].data
        if zp is None or zp.size != 1:
            return "its zero point is not one constant"
        dtype, zero = zp.dtype, int(zp.reshape(-1)[0])
    else:
        side = node.outputs[0] if node.op_type == "QuantizeLinear" else node.inputs[0]
        dtype, zero = graph.values[side].dtype, 0
    s = float(scale.reshape(-1)[0])
    if not (math.isfinite(s) and s >= _MIN_SCALE):
        return f"its scale {s} is not a normal positive float32"
    return s, zero, np.dtype(dtype)


def _ulps(s: np.ndarray, k: int) -> np.ndarray:
    """`s` (float32) moved k representable values up (k > 0) or down."""
    for _ in range(abs(k)):
        s = np.nextafter(s, np.float32(np.inf if k > 0 else 0), dtype=np.float32)
    return s


def exact_int8(w: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(q int8 in [-127, 127], scale float32 per slice along `axis`) with ``float32(q * scale) == w`` exactly.

    The importer folds DequantizeLinear of constant weights into float32 constants; this finds integers behind
    them again. Steps, per channel c with ``a = max |w_c|`` (a = 0: scale 1, q = 0):
      1. for top = 127, 126, ..., 1 (the largest |q| of the channel; 127 for symmetric quantizers) try the float32
         scales ``s = float32(a / top)`` and its neighbours up to two ulps away;
      2. q = round(w_c / s); accept when |q| <= 127 and the float32 product ``q * s`` gives back every w_c bit for bit
         (what DequantizeLinear computed);
    A channel with no such scale (float weights, or uint8 weights whose q - zp leaves [-127, 127]) gives None.
    """
    if w.dtype != np.float32 or w.ndim == 0:
        return None
    axis %= w.ndim
    moved = np.moveaxis(w, axis, 0)
    wc = moved.reshape(moved.shape[0], -1)
    if not np.all(np.isfinite(wc)):
        return None
    amax = np.abs(wc).max(axis=1).astype(np.float64) if wc.shape[1] else np.zeros(wc.shape[0])
    scale = np.ones(wc.shape[0], np.float32)
    q = np.zeros(wc.shape, np.float64)
    todo = np.flatnonzero(amax > 0)
    for top in range(127, 0, -1):
        for k in (0, 1, -1, 2, -2):
            if todo.size == 0:
                break
            s = _ulps((amax[todo] / top).astype(np.float32), k)
            rows = wc[todo]
            with np.errstate(divide="ignore", invalid="ignore"):
                qq = np.rint(rows.astype(np.float64) / s[:, None].astype(np.float64))
            ok = (s >= _MIN_SCALE) & np.all(np.abs(qq) <= 127, axis=1)
            ok &= np.all(qq.astype(np.float32) * s[:, None] == rows, axis=1)
            scale[todo[ok]] = s[ok]
            q[todo[ok]] = qq[ok]
            todo = todo[~ok]
        if todo.size == 0:
            break
    if todo.size:
        return None
    q8 = np.moveaxis(q.reshape(moved.shape).astype(np.int8), 0, axis)
    return np.ascontiguousarray(q8), scale


def add_multipliers(ra: float, rb: float) -> tuple[int, int, int] | None:
    """(a_mult, b_mult, shift) of QAdd for the real factors ra = s_a / s_y and rb = s_b / s_y.

    shift puts the larger multiplier in [2^30, 2^31): ``shift = 31 - e`` with ``max = f * 2^e``, f in [0.5, 1);
    each multiplier is ``round_half_even(r * 2^shift)`` (exact ldexp); a rounding up to 2^31 takes one off the
    shift. None when the shift would leave [1, 62] (factors beyond what one 64-bit sum holds).
    """
    big = max(ra, rb)
    if not (big > 0 and math.isfinite(big)):
        return None
    shift = 31 - math.frexp(big)[1]
    for _ in range(2):
        ma, mb = (int(np.rint(math.ldexp(r, shift))) for r in (ra, rb))
        if max(ma, mb) < 2**31:
            break
        shift -= 1
    if not 1 <= shift <= 62:
        return None
    return ma, mb, shift


# -- uint8 activations -> int8 ------------------------------------------------------------------------------------
# (op type) -> index of the zero point belonging to the input at each index, for nodes that read a quantized value
_READ_ZP = {"DequantizeLinear": {0: 2}, "QLinearConv": {0: 2}, "QLinearMatMul": {0: 2, 3: 5}}
# (op type) -> index of the zero point of the output, for nodes that write one
_WRITE_ZP = {"QuantizeLinear": 2, "QLinearConv": 7, "QLinearMatMul": 7}


def _zp_of(graph: Graph, node: Node, index: int, value_dtype: np.dtype) -> int | None:
    """The scalar uint8 zero point at input `index` (missing: 0), None when it is not one constant."""
    name = node.inputs[index] if index < len(node.inputs) else ""
    if not name:
        return 0 if value_dtype == _U8 else None
    arr = graph.values[name].data
    if arr is None or arr.size != 1 or arr.dtype != _U8:
        return None
    return int(arr.reshape(-1)[0])


def _with_zp(graph: Graph, node: Node, index: int, zp: int) -> Node:
    name = f"{node.name or node.op_type}/zero_point_s8"
    k = 1
    while name in graph.values:
        name, k = f"{node.name or node.op_type}/zero_point_s8_{k}", k + 1
    arr = np.array(zp - 128, np.int8)
    graph.values[name] = Value(name, arr.dtype, (), arr)
    ins = list(node.inputs) + [""] * (index + 1 - len(node.inputs))
    ins[index] = name
    attrs = dict(node.attrs)
    if node.op_type == "QuantizeLinear" and attrs.get("output_dtype"):
        attrs.pop("output_dtype")  # the zero point's type names the output type
    return dataclasses.replace(node, inputs=ins, attrs=attrs)


def signed_activations(graph: Graph) -> int:
    """Turns uint8 activations into int8 ones where that is exact; returns how many values changed.

    A uint8 value written by QuantizeLinear / QLinearConv / QLinearMatMul and read only by DequantizeLinear /
    QLinearConv / QLinearMatMul (as a quantized operand) is exactly the int8 value ``q - 128`` under zero point
    ``zp - 128``: ``clamp(round(x / s) + zp, 0, 255) - 128 == clamp(round(x / s) + zp - 128, -128, 127)`` and
    ``(q - zp) * s`` is unchanged. So the writer and every reader get the shifted zero point and the value becomes
    int8. Graph inputs and outputs keep their type.
    """
    readers = graph.consumers()
    index = {id(n): i for i, n in enumerate(graph.nodes)}
    changed = 0
    for node in list(graph.nodes):
        node = graph.nodes[index[id(node)]] if id(node) in index else node
        zi = _WRITE_ZP.get(node.op_type)
        if zi is None or node.op.domain or not node.outputs or not node.outputs[0]:
            continue
        out = node.outputs[0]
        v = graph.values[out]
        if v.dtype != _U8 or out in graph.outputs:
            continue
        zp = _zp_of(graph, node, zi, v.dtype)
        plan: list[tuple[Node, int, int]] = [] if zp is None else [(node, zi, zp)]
        for r in readers.get(out, []) if zp is not None else []:
            slots = [i for i, n in enumerate(r.inputs) if n == out]
            zmap = _READ_ZP.get(r.op_type, {}) if not r.op.domain else {}
            if len(slots) != 1 or slots[0] not in zmap or out in r.captures:
                plan = []
                break
            rz = _zp_of(graph, r, zmap[slots[0]], v.dtype)
            if rz is None:
                plan = []
                break
            plan.append((r, zmap[slots[0]], rz))
        if not plan:
            continue
        for n, zi2, z in plan:
            k = next(i for i, m in enumerate(graph.nodes) if m is n)
            new = _with_zp(graph, graph.nodes[k], zi2, z)
            graph.nodes[k] = new
            index[id(new)] = k
            for name in new.uses():  # keep the reader lists pointing at the live node
                lst = readers.get(name, [])
                readers[name] = [new if m is n else m for m in lst]
        graph.values[out] = Value(out, _I8, v.shape)
        changed += 1
    return changed
