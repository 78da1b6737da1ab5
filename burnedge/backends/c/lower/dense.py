"""Dense ops: MatMul, Gemm and the fused FusedGemm / FusedMatMul on the GEMM kernels, and the helpers conv.py shares.

Constant operands are repacked once, at compile time, into the panel layouts of the 6x16 micro-kernel (gemm.h):
Gemm/MatMul weights as A or B panels, with Gemm's alpha folded in. The epilogue of every kernel (bias or Gemm's
C, the fused residual, the fused activation) is a `be_epi` built here with constant strides. Conv and
ConvTranspose are lowered in conv.py.
"""

from __future__ import annotations

import math

import numpy as np

from ....ir import Graph, Node
from . import Ctx, lower
from .dense_w8 import int8_columns, w8_call, w8_scratch_bytes

MR, NR, MAX_THREADS = 6, 16, 4  # gemm.h: BE_MR, BE_NR, BE_DENSE_MAX_THREADS
ACTS = {"": "BE_ACT_NONE", "Relu": "BE_ACT_RELU", "Clip": "BE_ACT_CLIP", "LeakyRelu": "BE_ACT_LEAKY_RELU",
        "HardSigmoid": "BE_ACT_HARD_SIGMOID", "HardSwish": "BE_ACT_HARD_SWISH", "Sigmoid": "BE_ACT_SIGMOID",
        "Tanh": "BE_ACT_TANH", "Gelu": "BE_ACT_GELU"}  # fmt: skip
DEFAULT_PARAMS = {"Clip": (-math.inf, math.inf), "LeakyRelu": (0.01,), "HardSigmoid": (0.2, 0.5)}


def _f(x: float) -> str:
    x = float(np.float32(x))
    if math.isinf(x):
        return "INFINITY" if x > 0 else "-INFINITY"
    return f"{x!r}f"


def _epi(ctx: Ctx, node: Node, alpha=1.0, beta0=1.0, add0="0", s0=(0, 0), add1="0", s1=(0, 0)) -> str:
    """A C initializer of be_epi; the activation comes from the node's attributes (fused ops)."""
    act = node.attrs.get("activation", "") or ""
    ctx.require(act in ACTS, f"unknown epilogue activation {act!r}")
    params = list(node.attrs.get("activation_params", ()) or ()) or list(DEFAULT_PARAMS.get(act, ()))
    p = [*params, 0.0, 0.0][:2]
    return (
        f"{{{_f(alpha)}, {_f(beta0)}, {add0}, {s0[0]}, {s0[1]}, {add1}, {s1[0]}, {s1[1]}, {ACTS[act]}, "
        f"{_f(p[0])}, {_f(p[1])}}}"
    )


def pack_a(mat: np.ndarray) -> np.ndarray:
    """(rows, K) -> A panels: rows padded to MR, each panel K x MR."""
    rows, k = mat.shape
    pad = np.zeros((-(-rows // MR) * MR, k), np.float32)
    pad[:rows] = mat
    return np.ascontiguousarray(pad.reshape(-1, MR, k).transpose(0, 2, 1)).reshape(-1)


def pack_b(mat: np.ndarray) -> np.ndarray:
    """(K, cols) -> B panels: columns padded to NR, each panel K x NR."""
    k, cols = mat.shape
    pad = np.zeros((k, -(-cols // NR) * NR), np.float32)
    pad[:, :cols] = mat
    return np.ascontiguousarray(pad.reshape(k, -1, NR).transpose(1, 0, 2)).reshape(-1)


def _input(node: Node, i: int) -> str:
    return node.inputs[i] if len(node.inputs) > i and node.inputs[i] else ""


def _gemm_scratch_bytes(k: int) -> int:
    """gemm.h's be_gemm_scratch(K), in bytes."""
    nb = max(1, min(16, 6144 // (k * NR)))
    return (MAX_THREADS * nb * k * NR + 64) * 4


def _require_f32(ctx: Ctx, node: Node) -> None:
    for name in [*node.inputs, *node.outputs]:
        if name:
            ctx.require(ctx.dtype(name) == np.float32, f"{name!r} is {ctx.dtype(name)}; only float32 is supported")


# -- Gemm -----------------------------------------------------------------------------------------------------------
def _gemm_dims(graph: Graph, node: Node) -> tuple[int, int, int]:
    sa, sb = graph.values[node.inputs[0]].shape, graph.values[node.inputs[1]].shape
    m, k = (sa[1], sa[0]) if node.attrs.get("transA", 0) else sa
    n = sb[0] if node.attrs.get("transB", 0) else sb[1]
    return m, n, k


def _gemm_scratch(graph: Graph, node: Node) -> int:
    b = graph.values[node.inputs[1]]
    if b.is_const:
        w8 = int8_columns(b.data, node.attrs.get("transB", 0), float(node.attrs.get("alpha", 1.0)))
        m, _, k = _gemm_dims(graph, node)
        return w8_scratch_bytes(k, m) if w8 is not None else 0
    return _gemm_scratch_bytes(_gemm_dims(graph, node)[2])


def _strides2(shape: tuple[int, ...], rows: int, cols: int) -> tuple[int, int]:
    """Element strides (row, column) of an operand of `shape` broadcast to (rows, cols)."""
    full = (1,) * (2 - len(shape)) + tuple(shape[-2:])
    return (full[1] if full[0] != 1 or rows == 1 else 0), (1 if full[1] != 1 or cols == 1 else 0)


@lower("Gemm", scratch=_gemm_scratch)
@lower("FusedGemm", domain="burnedge", scratch=_gemm_scratch)
def gemm(ctx: Ctx, node: Node) -> str:
    _require_f32(ctx, node)
    m, n, k = _gemm_dims(ctx.graph, node)
    ta, tb = node.attrs.get("transA", 0), node.attrs.get("transB", 0)
    alpha, beta = float(node.attrs.get("alpha", 1.0)), float(node.attrs.get("beta", 1.0))
    a_name, b_name = node.inputs[0], node.inputs[1]
    rsa, csa = (1, m) if ta else (k, 1)
    rsb, csb = (1, k) if tb else (n, 1)
    a_packed = b_packed = 0
    bc, ac = ctx.const(b_name), ctx.const(a_name)
    # a packed operand is read only in its packed form: the original stays out of the weights blob
    w8 = int8_columns(bc, tb, alpha) if bc is not None else None
    if w8 is not None:  # weight-only int8: int8 panels dequantized on the fly (dense_w8.py)
        a, alpha, b_packed = ctx.tensor(a_name), 1.0, 2
    elif bc is not None:
        mat = (bc.T if tb else bc).astype(np.float32) * np.float32(alpha)
        a, b, b_packed, alpha = ctx.tensor(a_name), ctx.pack(f"dense:gemmB:{node.outputs[0]}", pack_b(mat)), 1, 1.0
    elif ac is not None:
        mat = (ac.T if ta else ac).astype(np.float32) * np.float32(alpha)
        a, a_packed, alpha = ctx.pack(f"dense:gemmA:{node.outputs[0]}", pack_a(mat)), 1, 1.0
        b = ctx.tensor(b_name)
    else:
        a, b = ctx.tensor(a_name), ctx.tensor(b_name)
    c, res = _input(node, 2), _input(node, 3) if node.op.domain == "burnedge" else ""
    add0, s0 = "0", (0, 0)
    if c and beta != 0.0:
        add0, s0 = ctx.tensor(c), _strides2(ctx.shape(c), m, n)
    epi = _epi(ctx, node, alpha=alpha, beta0=beta, add0=add0, s0=s0, add1=ctx.tensor(res) if res else "0", s1=(n, 1))
    scratch = "0" if b_packed else ctx.scratch()
    y = ctx.tensor(node.outputs[0])
    if w8 is not None:
        call = w8_call(ctx, f"dense:gemmW8:{node.outputs[0]}", w8, m, k, a, rsa, csa, y, str(n))
        return "\n".join(["{", f"  const be_epi ep = {epi};", f"  {call}", "}"])
    call = (f"be_gemm_f32({m}, {n}, {k}, {a}, {rsa}, {csa}, {a_packed}, {b}, {rsb}, {csb}, {b_packed}, {y}, {n}, "
            f"&ep, {scratch}, threads);")  # fmt: skip
    return "\n".join(["{", f"  const be_epi ep = {epi};", f"  {call}", "}"])


# -- MatMul ---------------------------------------------------------------------------------------------------------
def _mm_dims(graph: Graph, node: Node):
    sa, sb = graph.values[node.inputs[0]].shape, graph.values[node.inputs[1]].shape
    ea = (1, *sa) if len(sa) == 1 else tuple(sa)
    eb = (*sb, 1) if len(sb) == 1 else tuple(sb)
    batch = tuple(np.broadcast_shapes(ea[:-2], eb[:-2]))
    return ea, eb, batch, ea[-2], ea[-1], eb[-1]


def _mm_flat(graph: Graph, node: Node) -> bool:
    """B is one constant matrix: A's batch folds into its rows and B is packed once."""
    eb = _mm_dims(graph, node)[1]
    return graph.values[node.inputs[1]].is_const and math.prod(eb[:-2]) == 1


def _mm_w8(graph: Graph, node: Node):
    """The int8 levels of a flat MatMul's constant B (dense_w8.py), or None."""
    if not _mm_flat(graph, node):
        return None
    b = graph.values[node.inputs[1]].data
    return int8_columns(b) if b.ndim == 2 else None


def _mm_scratch(graph: Graph, node: Node) -> int:
    ea, _, _, _, k, _ = _mm_dims(graph, node)
    if graph.values[node.inputs[0]].dtype == np.float64:
        return 0
    if _mm_flat(graph, node):
        return w8_scratch_bytes(k, math.prod(ea[:-1])) if _mm_w8(graph, node) is not None else 0
    return _gemm_scratch_bytes(k)


def _batch_strides(shape: tuple[int, ...], batch: tuple[int, ...], mat: int) -> list[int]:
    """Element strides of each batch dim of an operand (..., r, c) of `mat` elements per matrix; 0 = broadcast."""
    full = (1,) * (len(batch) - len(shape)) + tuple(shape)
    strides, acc = [0] * len(batch), mat
    for d in range(len(batch) - 1, -1, -1):
        strides[d] = acc if full[d] != 1 else 0
        acc *= full[d]
    return strides


def _bias_strides(ctx: Ctx, shape: tuple[int, ...], out: tuple[int, ...], node: Node) -> tuple[int, int]:
    """(row, column) element strides of a FusedMatMul bias over the output's matrix dims; batch dims broadcast."""
    full = (1,) * (len(out) - len(shape)) + tuple(shape)
    has_m, has_n = len(ctx.shape(node.inputs[0])) > 1, len(ctx.shape(node.inputs[1])) > 1
    nb = len(out) - has_m - has_n
    ctx.require(math.prod(full[:nb]) == 1, "a bias that varies along the batch dims is not supported")
    cs = 1 if has_n and full[-1] != 1 else 0
    rs = (full[-1] if has_n else 1) if has_m and full[nb] != 1 else 0
    return rs, cs


@lower("MatMul", scratch=_mm_scratch)
@lower("FusedMatMul", domain="burnedge", scratch=_mm_scratch)
def matmul(ctx: Ctx, node: Node) -> str:
    if node.op.domain == "" and ctx.dtype(node.inputs[0]) == np.float64:
        return _matmul_f64(ctx, node)
    _require_f32(ctx, node)
    ea, eb, batch, m, k, n = _mm_dims(ctx.graph, node)
    out_shape = ctx.shape(node.outputs[0])
    y = ctx.tensor(node.outputs[0])
    bias, res = (_input(node, 2), _input(node, 3)) if node.op.domain == "burnedge" else ("", "")
    add0, s0 = "0", (0, 0)
    if bias:
        add0, s0 = ctx.tensor(bias), _bias_strides(ctx, ctx.shape(bias), out_shape, node)
    if _mm_flat(ctx.graph, node):
        # one GEMM over all of A's rows; a bias varying along M repeats per matrix, so then one GEMM per matrix
        reps = math.prod(ea[:-2]) if s0[0] else 1
        rows = math.prod(ea[:-1]) // reps
        add1 = f"({ctx.tensor(res)} + bi * {rows * n})" if res else "0"
        epi = _epi(ctx, node, add0=add0, s0=s0, add1=add1, s1=(n, 1))
        a = ctx.tensor(node.inputs[0])
        w8 = _mm_w8(ctx.graph, node)
        if w8 is not None:  # weight-only int8: int8 panels dequantized on the fly (dense_w8.py)
            call = w8_call(ctx, f"dense:mmW8:{node.inputs[1]}", w8, rows, k, f"{a} + bi * {rows * k}", k, 1,
                           f"{y} + bi * {rows * n}", str(n))  # fmt: skip
            return "\n".join(["{", f"  for (long bi = 0; bi < {reps}; bi++) {{", f"    const be_epi ep = {epi};",
                              f"    {call}", "  }", "}"])  # fmt: skip
        bp = ctx.pack(f"dense:mmB:{node.inputs[1]}", pack_b(ctx.const(node.inputs[1]).astype(np.float32).reshape(k, n)))
        call = (f"be_gemm_f32({rows}, {n}, {k}, {a} + bi * {rows * k}, {k}, 1, 0, {bp}, 0, 0, 1, "
                f"{y} + bi * {rows * n}, {n}, &ep, 0, threads);")  # fmt: skip
        return "\n".join(["{", f"  for (long bi = 0; bi < {reps}; bi++) {{", f"    const be_epi ep = {epi};",
                          f"    {call}", "  }", "}"])  # fmt: skip
    sta = _batch_strides(ea[:-2], batch, m * k)
    stb = _batch_strides(eb[:-2], batch, k * n)
    lines = ["{", f"  for (long bi = 0; bi < {math.prod(batch)}; bi++) {{"]
    _batch_offsets(lines, batch, sta, stb)
    add1 = f"({ctx.tensor(res)} + bi * {m * n})" if res else "0"
    epi = _epi(ctx, node, add0=add0, s0=s0, add1=add1, s1=(n, 1))
    a, b = ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1])
    lines += [
        f"    const be_epi ep = {epi};",
        f"    be_gemm_f32({m}, {n}, {k}, {a} + oa, {k}, 1, 0, {b} + ob, {n}, 1, 0, {y} + bi * {m * n}, {n}, &ep, "
        f"{ctx.scratch()}, threads);",
        "  }",
        "}",
    ]
    return "\n".join(lines)


def _batch_offsets(lines: list[str], batch: tuple[int, ...], sta: list[int], stb: list[int]) -> None:
    """C statements that split the batch index `bi` into the element offsets oa, ob of A's and B's matrices."""
    lines.append("    long r = bi, oa = 0, ob = 0;")
    for d in range(len(batch) - 1, -1, -1):
        lines.append(
            f"    {{ const long i = r % {batch[d]}; r /= {batch[d]}; oa += i * {sta[d]}; ob += i * {stb[d]}; }}"
        )
    lines.append("    (void)r;")


def _matmul_f64(ctx: Ctx, node: Node) -> str:
    """float64 MatMul as a plain triple loop in double (numpy's matmul accumulates in double too): float64 graphs
    are small (scientific models, the double-precision node tests), so no packed kernel is kept for them."""
    for name in [*node.inputs, *node.outputs]:
        ctx.require(ctx.dtype(name) == np.float64, f"{name!r} is {ctx.dtype(name)}; MatMul mixes no dtypes")
    ea, eb, batch, m, k, n = _mm_dims(ctx.graph, node)
    if ctx.size(node.outputs[0]) == 0:
        return "/* empty */"
    a, b, y = ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1]), ctx.tensor(node.outputs[0])
    lines = ["{", f"  for (long bi = 0; bi < {math.prod(batch)}; bi++) {{"]
    _batch_offsets(lines, batch, _batch_strides(ea[:-2], batch, m * k), _batch_strides(eb[:-2], batch, k * n))
    lines += [
        f"    const double *ap = {a} + oa, *bp = {b} + ob;",
        f"    double *yp = {y} + bi * {m * n};",
        f"    for (long i = 0; i < {m}; i++)",
        f"      for (long j = 0; j < {n}; j++) {{",
        "        double acc = 0.0;",
        f"        for (long p = 0; p < {k}; p++) acc += ap[i * {k} + p] * bp[p * {n} + j];",
        f"        yp[i * {n} + j] = acc;",
        "      }",
        "  }",
        "}",
    ]
    return "\n".join(lines)
