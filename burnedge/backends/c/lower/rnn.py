"""LSTM / GRU / RNN lowerings: weights repacked per direction at compile time, one `be_rnn_f32` call per direction.

Per direction the lowering packs W^T [I, G*H] and R^T [H, G*H] (so the kernel's GEMMs stream contiguous rows),
sums the biases that add outside any gate product (Wb + Rb, except GRU's hidden-gate Rb under
linear_before_reset, which is passed on its own), and describes X, Y, Y_h / Y_c and the initial states by
element strides, so both layouts and both directions use the same kernel (kernels/rnn.c). The kernel's scratch
(the input projection of every step, the gates, the states) is reused by the second direction. sequence_lens
that are ragged or known only at run time go to the kernel, which stops each sequence at its length.
"""

from __future__ import annotations

import numpy as np

from ....ir import Graph, Node
from ....ops import rnn as ref
from . import Ctx, lower
from .movement import attrs, copy_code

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
KIND = {"LSTM": "BE_RNN_LSTM", "GRU": "BE_RNN_GRU", "RNN": "BE_RNN_RNN"}
ACT_CODES = {
    "sigmoid": "BE_RACT_SIGMOID", "tanh": "BE_RACT_TANH", "relu": "BE_RACT_RELU", "affine": "BE_RACT_AFFINE",
    "leakyrelu": "BE_RACT_LEAKY_RELU", "thresholdedrelu": "BE_RACT_THRESHOLDED_RELU",
    "scaledtanh": "BE_RACT_SCALED_TANH", "hardsigmoid": "BE_RACT_HARD_SIGMOID", "elu": "BE_RACT_ELU",
    "softsign": "BE_RACT_SOFTSIGN", "softplus": "BE_RACT_SOFTPLUS",
}  # fmt: skip


def _dims(graph: Graph, node: Node) -> tuple[int, int, int, int, int]:
    """(T, B, input size, H, D) of a recurrent node."""
    a = attrs(node)
    x = graph.values[node.inputs[0]].shape
    r = graph.values[node.inputs[2]].shape
    T, B = (x[1], x[0]) if a.get("layout", 0) else (x[0], x[1])
    H = int(a["hidden_size"]) if a.get("hidden_size") else int(r[-1])
    D = 2 if a.get("direction", "forward") == "bidirectional" else 1
    return int(T), int(B), int(x[2]), H, D


def _kernel_floats(graph: Graph, node: Node) -> int:
    """Floats of be_rnn_f32's own scratch (64-byte multiple), as be_rnn_scratch_floats counts them."""
    T, B, _, H, _ = _dims(graph, node)
    G = GATES[node.op_type]
    return (T * B * G * H + B * G * H + 3 * B * H + 15) // 16 * 16


def _runtime_weights(graph: Graph, node: Node) -> bool:
    """True when W, R or B is computed at run time: they are then transposed into scratch before each call."""
    return any(n and graph.values[n].data is None for n in node.inputs[1:4])


def _scratch(graph: Graph, node: Node) -> int:
    floats = _kernel_floats(graph, node)
    if _runtime_weights(graph, node):
        _, _, n_in, H, _ = _dims(graph, node)
        floats += (n_in + H + 2) * GATES[node.op_type] * H
    return 4 * floats


def _activations(ctx: Ctx, node: Node, D: int) -> list[list[tuple[str, float, float]]]:
    """Per direction, (code, alpha, beta) of f, g, h, as the reference pairs names with alphas and betas."""
    a = attrs(node)
    defaults = ref._DEFAULT_ACTS[node.op_type]
    names = list(a.get("activations") or []) or list(defaults) * D
    if len(names) == len(defaults) and D == 2:
        names = names * 2
    ctx.require(len(names) == len(defaults) * D, f"expected {len(defaults) * D} activations, got {names}")
    alphas, betas = list(a.get("activation_alpha") or []), list(a.get("activation_beta") or [])
    out = []
    for name in names:
        key = name.lower()
        ctx.require(key in ACT_CODES, f"unsupported activation {name!r}")
        _, da, db = ref._ACTS[key]
        al = (alphas.pop(0) if alphas else da) if da is not None else 0.0
        be = (betas.pop(0) if betas else db) if db is not None else 0.0
        out.append((ACT_CODES[key], float(al), float(be)))
    k = len(defaults)
    return [(out[d * k : (d + 1) * k] + [("BE_RACT_TANH", 0.0, 0.0)] * 3)[:3] for d in range(D)]


def _f(v: float) -> str:
    return repr(float(np.float32(v))) + "f"


@lower("LSTM", "GRU", "RNN", scratch=_scratch)
def recurrent(ctx: Ctx, node: Node) -> str:
    op = node.op_type
    a = attrs(node)
    names = list(ref._INPUTS[op])
    ins = dict(zip(names, list(node.inputs) + [""] * (len(names) - len(node.inputs))))
    ctx.require(ctx.dtype(ins["X"]) == np.float32, "float32 only")
    T, B, n_in, H, D = _dims(ctx.graph, node)
    layout = int(a.get("layout", 0))
    lens_ptr = "NULL"  # every sequence T steps long
    if ins["sequence_lens"]:
        lens = ctx.const(ins["sequence_lens"])
        if lens is None or not bool((np.asarray(lens) >= T).all()):  # ragged, or known only at run time
            seq = ins["sequence_lens"]
            ctx.require(ctx.dtype(seq) == np.int32, f"sequence_lens is {ctx.dtype(seq)}, expected int32")
            ctx.require(ctx.size(seq) == B, f"sequence_lens has {ctx.size(seq)} values, expected one per batch ({B})")
            lens_ptr = ctx.tensor(seq)
    clip = a.get("clip")
    ctx.require(clip is None or clip > 0, "clip must be positive")
    G = GATES[op]
    runtime = _runtime_weights(ctx.graph, node)
    if not runtime:
        W = ctx.const(ins["W"]).astype(np.float32)
        R = ctx.const(ins["R"]).astype(np.float32)
        Bias = ctx.const(ins["B"]).astype(np.float32) if ins["B"] else np.zeros((D, 2 * G * H), np.float32)
    P = ctx.const(ins["P"]) if ins.get("P") else None
    lbr = int(a.get("linear_before_reset", 0)) if op == "GRU" else 0
    acts = _activations(ctx, node, D)
    outs = list(node.outputs) + [""] * 3
    x_t, x_b = (n_in, T * n_in) if layout else (B * n_in, n_in)
    y_t, y_b = (D * H, T * D * H) if layout else (D * B * H, H)
    s_b = D * H if layout else H

    def at(name: str, off: int) -> str:
        return f"({ctx.tensor(name)} + {off})" if name else "NULL"

    direction = a.get("direction", "forward")
    ctx.require(direction in ("forward", "reverse", "bidirectional"), f"unknown direction {direction!r}")
    code = []
    for d in range(D):
        key = f"{node.name}/d{d}"
        if runtime:
            wt, rt, bp, rbh = _runtime_pack(ctx, node, ins, d, n_in, H, G, lbr, code)
        else:
            wb, rb = Bias[d, : G * H], Bias[d, G * H :]
            bias = wb + rb
            if lbr:
                bias = wb + np.concatenate([rb[: 2 * H], np.zeros(H, np.float32)])
            wt = ctx.pack(f"{key}/wt", np.ascontiguousarray(W[d].T))
            rt = ctx.pack(f"{key}/rt", np.ascontiguousarray(R[d].T))
            bp = ctx.pack(f"{key}/bias", bias.astype(np.float32))
            rbh = ctx.pack(f"{key}/rbh", rb[2 * H :].copy()) if lbr else "NULL"
        if P is None:
            pp = at(ins.get("P", ""), 3 * H * d)
        else:
            pp = ctx.pack(f"{key}/p", P[d].astype(np.float32))
        state_off = d * H if layout else d * B * H
        y_off = d * H if layout else d * B * H
        (f0, a0, b0), (f1, a1, b1), (f2, a2, b2) = acts[d]
        cfg = (
            f"&(be_rnn_cfg){{.kind = {KIND[op]}, .T = {T}, .B = {B}, .I = {n_in}, .H = {H}, "
            f".reverse = {int(direction == 'reverse' or d == 1)}, .lbr = {lbr}, "
            f".input_forget = {int(a.get('input_forget', 0) or 0)}, .clip = {_f(clip or 0.0)}, "
            f".act = {{{f0}, {f1}, {f2}}}, .alpha = {{{_f(a0)}, {_f(a1)}, {_f(a2)}}}, "
            f".beta = {{{_f(b0)}, {_f(b1)}, {_f(b2)}}}, .x_t = {x_t}, .x_b = {x_b}, .y_t = {y_t}, .y_b = {y_b}, "
            f".s_b = {s_b}, .lens = {lens_ptr}}}"
        )
        code.append(
            f"be_rnn_f32({cfg},\n  {ctx.tensor(ins['X'])}, {wt}, {rt}, {bp}, {rbh}, {pp}, "
            f"{at(ins['initial_h'], state_off)}, {at(ins.get('initial_c', ''), state_off)}, "
            f"{at(outs[0], y_off)}, {at(outs[1], state_off)}, {at(outs[2] if op == 'LSTM' else '', state_off)}, "
            f"{ctx.scratch('float')}, threads);"
        )
    return "\n".join(code)


def _runtime_pack(ctx: Ctx, node: Node, ins: dict, d: int, n_in: int, H: int, G: int, lbr: int, code: list[str]):
    """C code (appended to `code`) that lays direction d's run-time W, R and B out as be_rnn_f32 wants them, in
    the scratch after the kernel's own; returns the (wt, rt, bias, rbh) pointers."""
    GH = G * H
    base = _kernel_floats(ctx.graph, node)
    scratch = ctx.scratch("float")
    wt, rt = f"({scratch} + {base})", f"({scratch} + {base + n_in * GH})"
    bias, rbh = f"({scratch} + {base + (n_in + H) * GH})", f"({scratch} + {base + (n_in + H + 1) * GH})"
    for src, dst, k in ((ins["W"], wt, n_in), (ins["R"], rt, H)):  # [GH, k] of direction d -> [k, GH]
        code.append(copy_code(f"((uint8_t *){dst})", ctx.tensor(src, "uint8_t"), 4, [k, GH], [GH, 1], [1, k], 0,
                              d * GH * k))  # fmt: skip
    if ins["B"]:
        b = f"({ctx.tensor(ins['B'])} + {d * 2 * GH})"
        keep = f"(j < {2 * H} ? {b}[{GH} + j] : 0.0f)" if lbr else f"{b}[{GH} + j]"
        code.append(f"for (int j = 0; j < {GH}; j++) {bias}[j] = {b}[j] + {keep};")
        if lbr:
            code.append(f"memcpy({rbh}, {b} + {GH + 2 * H}, {4 * H});")
    else:
        code.append(f"memset({bias}, 0, {4 * GH});")
        if lbr:
            code.append(f"memset({rbh}, 0, {4 * H});")
    return wt, rt, bias, rbh if lbr else "NULL"
