"""Transposes around a MatMul become the MatMul's own indexing: FusedMatMul(perm_a, perm_b, perm_y).

Why: on a GPU every step is one kernel launch, and a launch costs the host several microseconds whatever the
kernel does (NVIDIA's OpenCL: ~8 us). Attention as exported from PyTorch moves every head through Transposes
(Q, K, V in, the context out): each is a launch that only copies. A GEMM reads its operands element by element
through `lda` / `ldb` and stores through `st`, so it can read through a permutation and store through one at no
cost, and the copies vanish.

    MatMul(Transpose(x, p), y)        -> FusedMatMul(x, y, perm_a=p)
    MatMul(x, Transpose(Transpose(y, p1), p2)) -> FusedMatMul(x, y, perm_b=p1[p2])   (chains compose)
    Transpose(MatMul(x, y), q)        -> FusedMatMul(x, y, perm_y=q)   (no residual: R has the result's shape)

A Transpose is folded only when the MatMul is its one reader and it is not a graph output; operands of rank < 2
and graphs that are not float are left alone. Not in the default pipeline: backends whose GEMM reads through
strides opt in (the OpenCL backend); the numpy reference computes the same (ops/fused.py).
"""

from __future__ import annotations

from ..ir import Graph, Node
from ..ops import for_onnx
from ._match import Rewriter, origin_of

__all__ = ["run"]


def _source(
    rw: Rewriter, producers: dict[str, Node], name: str, reader: Node
) -> tuple[str, list[int] | None, list[Node]]:
    """(the tensor `reader` can read instead of `name`, the permutation to read it through, Transposes passed)."""
    perm, passed, want = None, [], reader
    while True:
        node = producers.get(name)
        if node is None or node.op_type != "Transpose" or node.op.domain or rw.sole_reader(name) is not want:
            return name, perm, passed
        src = node.inputs[0]
        inner = [int(p) for p in (node.attrs.get("perm") or range(len(rw.value(src).shape))[::-1])]
        perm = inner if perm is None else [inner[p] for p in perm]  # read out[d] = src[.. inner[perm[d]] ..]
        passed.append(node)
        want, name = node, src


def run(graph: Graph) -> Graph:
    rw = Rewriter(graph)
    producers = {o: n for n in graph.nodes for o in n.outputs if o}
    fused = for_onnx("FusedMatMul", 1, "burnedge")
    for node in list(graph.nodes):
        if node.op_type not in ("MatMul", "FusedMatMul") or len(node.outputs) != 1:
            continue
        if any(k in node.attrs for k in ("perm_a", "perm_b", "perm_y")):
            continue
        a, b = node.inputs[0], node.inputs[1]
        if rw.value(node.outputs[0]).dtype.kind != "f" or len(rw.value(a).shape) < 2 or len(rw.value(b).shape) < 2:
            continue
        inputs = list(node.inputs)
        attrs = {"activation": "", "activation_params": [], **node.attrs}
        old = [node]
        for i, key in ((0, "perm_a"), (1, "perm_b")):
            src, perm, passed = _source(rw, producers, inputs[i], node)
            if passed:
                inputs[i], attrs[key] = src, perm
                old += passed
        out = node.outputs[0]
        has_residual = len(inputs) > 3 and bool(inputs[3])
        after = rw.sole_reader(out)
        if after is not None and after.op_type == "Transpose" and not after.op.domain and not has_residual:
            attrs["perm_y"] = [int(p) for p in (after.attrs.get("perm") or range(len(rw.value(out).shape))[::-1])]
            out = after.outputs[0]
            old.append(after)
        if len(old) == 1:
            continue
        new = Node(fused, node.name, inputs, [out], attrs, origin=origin_of(old))
        rw.replace(old, new, at=node)
        for n in old:  # the producers follow the rewrite (a later MatMul may read `out`)
            for o in n.outputs:
                producers.pop(o, None)
        producers[out] = new
    return rw.finish()
