"""What QDQ import reads off a quantized graph: per-tensor Q/DQ parameters and the exact int8 weights behind float
ones."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...ir import Graph, Node
from ..qparams import MIN_SCALE

__all__ = ["Act", "exact_int8", "per_tensor_qparams"]


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
    if not (math.isfinite(s) and s >= MIN_SCALE):
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
            ok = (s >= MIN_SCALE) & np.all(np.abs(qq) <= 127, axis=1)
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
