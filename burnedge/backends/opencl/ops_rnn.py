"""LSTM and GRU (forward, default activations, no peepholes or clip, layout 0) as one kernel per node.

One work-group per batch row, one work item per hidden unit: at every time step each item computes its unit's
gates from x_t (global memory) and h_{t-1} (local memory, shared by the group), then the group waits at a
barrier before h_t replaces h_{t-1}. The whole sequence is one launch: no host round trip per step.
Gate orders are ONNX's: LSTM i, o, f, c; GRU z, r, h.
"""

from __future__ import annotations

import numpy as np

from ...ir import Node
from .emit import Ctx, kernel


def _check(ctx: Ctx, node: Node, gates: int) -> tuple[int, int, int, int]:
    a = node.attrs
    ctx.require(a.get("direction", "forward") == "forward", f"direction {a.get('direction')!r}")
    ctx.require(not a.get("layout", 0), "layout 1 (batch first)")
    ctx.require(a.get("clip") is None, "clip")
    ctx.require(not a.get("input_forget", 0), "input_forget")
    acts = [x.decode() if isinstance(x, bytes) else x for x in (a.get("activations") or [])]
    default = ["Sigmoid", "Tanh", "Tanh"][: 3 if gates == 4 else 2]
    ctx.require(not acts or [x.lower() for x in acts] == [x.lower() for x in default], f"activations {acts}")
    ins = list(node.inputs) + [""] * (8 - len(node.inputs))
    ctx.require(not ins[4] or ctx.const(ins[4]) is not None, "sequence_lens computed at run time")
    if ins[4]:
        lens = np.asarray(ctx.const(ins[4]))
        ctx.require(bool(np.all(lens == ctx.shape(ins[0])[0])), "ragged sequence_lens")
    ctx.require(not (gates == 4 and ins[7]), "peepholes (P)")
    for name in [*node.inputs, *node.outputs]:
        if name and name != ins[4]:
            ctx.require(ctx.dtype(name) == np.float32, f"tensor {name!r} is {ctx.dtype(name)}, not float32")
    T, B, n_in = ctx.shape(node.inputs[0])
    H = int(a["hidden_size"]) if a.get("hidden_size") else ctx.shape(node.inputs[2])[-1]
    ctx.require(H <= 1024, f"hidden size {H} over one work-group")
    return T, B, n_in, H


def _io(ctx: Ctx, node: Node) -> dict[str, str | None]:
    ins = list(node.inputs) + [""] * (8 - len(node.inputs))
    outs = list(node.outputs) + [""] * (3 - len(node.outputs))
    p = {k: (ctx.ptr(n) if n else None) for k, n in zip(("x", "w", "r", "b", "_", "h0", "c0"), ins)}
    p.update({k: (ctx.ptr(n) if n else None) for k, n in zip(("y", "yh", "yc"), outs)})
    return p


def _opt(ptr: str | None, index: str, store: str | None = None, default: str = "0.0f") -> str:
    """`ptr[index]` (or the statement `ptr[index] = store;`) when the tensor exists, else `default` (or nothing)."""
    if ptr is None:
        return "" if store is not None else default
    return f"{ptr}[{index}] = {store};" if store is not None else f"{ptr}[{index}]"


def _dot(row: str, vec: str, n: int) -> str:
    return f"for (int q = 0; q < {n}; q++) acc = fma({row}[q], {vec}[q], acc);"


def _launch(ctx: Ctx, B: int, H: int, body: list[str]) -> None:
    ls = -(-H // 32) * 32
    ctx.launch("\n  ".join(body), B * ls, (ls,))


def _gate(name: str, k: int, H: int, n_in: int, p: dict) -> list[str]:
    """Statements computing gate `k`'s pre-activation for unit j into `name` (W x_t + R h + Wb + Rb)."""
    bias = f"{p['b']}[{k * H} + j] + {p['b']}[{k * H} + j + GH]" if p["b"] else "0.0f"
    return [
        f"float {name}; {{ float acc = {bias};",
        "  " + _dot(f"({p['w']} + ({k * H} + j) * {n_in})", "xt", n_in),
        "  " + _dot(f"({p['r']} + ({k * H} + j) * {H})", "hs", H),
        f"  {name} = acc; }}",
    ]


@kernel("LSTM")
def lstm(ctx: Ctx, node: Node) -> None:
    T, B, n_in, H = _check(ctx, node, 4)
    p = _io(ctx, node)
    body = [
        "const int j = get_local_id(0), b = get_group_id(0);",
        f"__local float hs[{H}];",
        f"float c = 0.0f; if (j < {H}) {{ hs[j] = {_opt(p['h0'], f'b * {H} + j')}; "
        f"c = {_opt(p['c0'], f'b * {H} + j')}; }}",
        "barrier(CLK_LOCAL_MEM_FENCE);",
        f"for (int t = 0; t < {T}; t++) {{",
        f"  __global const float *xt = {p['x']} + ((long)t * {B} + b) * {n_in};",
        "  float h = 0.0f;",
        f"  if (j < {H}) {{",
        *("    " + s for g, k in (("gi", 0), ("go", 1), ("gf", 2), ("gc", 3)) for s in _gate(g, k, H, n_in, p)),
        "    const float it = 1.0f / (1.0f + exp(-gi)), ft = 1.0f / (1.0f + exp(-gf));",
        "    c = ft * c + it * tanh(gc);",
        "    h = (1.0f / (1.0f + exp(-go))) * tanh(c);",
        f"    {_opt(p['y'], f'((long)t * {B} + b) * {H} + j', 'h')}",
        "  }",
        "  barrier(CLK_LOCAL_MEM_FENCE);",
        f"  if (j < {H}) hs[j] = h;",
        "  barrier(CLK_LOCAL_MEM_FENCE);",
        "}",
        f"if (j < {H}) {{",
        f"  {_opt(p['yh'], f'b * {H} + j', 'hs[j]')}",
        f"  {_opt(p['yc'], f'b * {H} + j', 'c')}",
        "}",
    ]
    _launch(ctx, B, H, [s.replace("GH", str(4 * H)) for s in body])


@kernel("GRU")
def gru(ctx: Ctx, node: Node) -> None:
    T, B, n_in, H = _check(ctx, node, 3)
    p = _io(ctx, node)
    lbr = bool(node.attrs.get("linear_before_reset", 0))
    wb = (lambda k: f"{p['b']}[{k * H} + j]") if p["b"] else (lambda k: "0.0f")
    rb = (lambda k: f"{p['b']}[{(3 + k) * H} + j]") if p["b"] else (lambda k: "0.0f")
    w_row = f"({p['w']} + ({2 * H} + j) * {n_in})"
    r_row = f"({p['r']} + ({2 * H} + j) * {H})"
    if lbr:  # W_h x + Wb_h + r * (R_h h + Rb_h)
        cand = [
            f"float xh = {wb(2)}; {{ float acc = 0.0f; {_dot(w_row, 'xt', n_in)} xh += acc; }}",
            f"float rh = {rb(2)}; {{ float acc = 0.0f; {_dot(r_row, 'hs', H)} rh += acc; }}",
            "const float hh = tanh(xh + rt * rh);",
        ]
    else:  # W_h x + Wb_h + R_h (r * h) + Rb_h: every item needs r of every unit, kept in local memory
        cand = [
            "rs[j] = rt * hs[j];",
            "}",
            "barrier(CLK_LOCAL_MEM_FENCE);",
            f"if (j < {H}) {{",
            f"float xh = {wb(2)} + {rb(2)}; {{ float acc = 0.0f; {_dot(w_row, 'xt', n_in)} "
            f"{_dot(r_row, 'rs', H)} xh += acc; }}",
            "const float hh = tanh(xh);",
        ]
    body = [
        "const int j = get_local_id(0), b = get_group_id(0);",
        f"__local float hs[{H}], rs[{H}];",
        f"if (j < {H}) hs[j] = {_opt(p['h0'], f'b * {H} + j')};",
        "barrier(CLK_LOCAL_MEM_FENCE);",
        f"for (int t = 0; t < {T}; t++) {{",
        f"  __global const float *xt = {p['x']} + ((long)t * {B} + b) * {n_in};",
        "  float h = 0.0f, zt = 0.0f, rt = 0.0f;",
        f"  if (j < {H}) {{",
        *("    " + s for g, k in (("gz", 0), ("gr", 1)) for s in _gate(g, k, H, n_in, p)),
        "    zt = 1.0f / (1.0f + exp(-gz)); rt = 1.0f / (1.0f + exp(-gr));",
        *("    " + s for s in cand),
        "    h = (1.0f - zt) * hh + zt * hs[j];",
        f"    {_opt(p['y'], f'((long)t * {B} + b) * {H} + j', 'h')}",
        "  }",
        "  barrier(CLK_LOCAL_MEM_FENCE);",
        f"  if (j < {H}) hs[j] = h;",
        "  barrier(CLK_LOCAL_MEM_FENCE);",
        "}",
        f"if (j < {H}) {{ {_opt(p['yh'], f'b * {H} + j', 'hs[j]')} }}",
    ]
    _launch(ctx, B, H, [s.replace("GH", str(3 * H)) for s in body])
