"""LayerNorm fusion: the decomposed layer norm of older PyTorch opsets and Paddle becomes one LayerNormalization.

The pattern (x over trailing axes [a, rank)), as exporters write it::

    m = ReduceMean(x, axes)            keepdims=1
    d = Sub(x, m)
    p = Pow(d, 2)        or Mul(d, d)
    v = ReduceMean(p, axes)
    e = Add(v, eps)                    eps a one-element constant
    s = Sqrt(e)
    n = Div(d, s)        or Mul(d, Reciprocal(s))
    y = Mul(n, gamma)                  optional, gamma constant along the normalised axes
    y = Add(y, beta)                   optional, beta constant along the normalised axes

becomes ``LayerNormalization(x, gamma or ones, beta) axis=a epsilon=eps`` (opset 17), whose `origin` lists the
fused ONNX nodes. Every intermediate must be read only inside the pattern (and be no graph output).

Steps: for each ReduceMean, follow its single reader through the pattern, checking operands and readers at each
step, then replace the matched nodes by the LayerNormalization node at the place of the last one.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Node
from ..ops import for_onnx
from ._match import Rewriter, origin_of, strip_ones


def _axes(rw: Rewriter, node: Node, rank: int) -> tuple[int, ...] | None:
    """The sorted non-negative axes a keepdims ReduceMean reduces, None when unknown."""
    if node.op_type != "ReduceMean" or node.op.domain or not node.attrs.get("keepdims", 1):
        return None
    if len(node.inputs) > 1 and node.inputs[1]:
        arr = rw.const(node.inputs[1])
        if arr is None:
            return None
        axes = [int(a) for a in arr.reshape(-1)]
    else:
        axes = node.attrs.get("axes")
    if axes is None or len(axes) == 0:
        if node.attrs.get("noop_with_empty_axes", 0):
            return None
        axes = list(range(rank))
    return tuple(sorted(a % rank for a in axes))


def _other(node: Node, name: str) -> str | None:
    """The input of a two-input node that is not `name` (None when both or neither are)."""
    if len(node.inputs) != 2 or node.inputs.count(name) != 1:
        return None
    return node.inputs[1] if node.inputs[0] == name else node.inputs[0]


def _is(node: Node | None, op: str) -> bool:
    return node is not None and node.op_type == op and not node.op.domain


def _affine(rw: Rewriter, name: str, tail: tuple[int, ...]) -> np.ndarray | None:
    """A constant that broadcasts along the normalised axes `tail` only, expanded to `tail`, else None."""
    arr = rw.const(name)
    if arr is None or arr.dtype.kind != "f":
        return None
    core = strip_ones(tuple(arr.shape))
    if len(core) > len(tail) or any(d not in (1, t) for d, t in zip(core[::-1], tail[::-1])):
        return None
    return np.broadcast_to(arr.reshape(core), tail).astype(np.float32)


def _match(rw: Rewriter, mean: Node) -> tuple[list[Node], dict] | None:
    x = mean.inputs[0]
    xv = rw.value(x)
    rank = len(xv.shape)
    axes = _axes(rw, mean, rank)
    if xv.dtype != np.float32 or rank == 0 or axes is None or axes != tuple(range(axes[0], rank)):
        return None
    sub = rw.sole_reader(mean.outputs[0])
    if not _is(sub, "Sub") or sub.inputs != [x, mean.outputs[0]]:
        return None
    d = sub.outputs[0]
    readers = rw.readers.get(d, [])
    if d in rw.outputs or len(readers) not in (2, 3):
        return None
    sq = next((r for r in readers if _is(r, "Pow") or (_is(r, "Mul") and r.inputs == [d, d])), None)
    if sq is None or (_is(sq, "Pow") and (sq.inputs[0] != d or rw.scalar(sq.inputs[1]) != 2.0)):
        return None
    var = rw.sole_reader(sq.outputs[0])
    if var is None or var.inputs[0] != sq.outputs[0] or _axes(rw, var, rank) != axes:
        return None
    add = rw.sole_reader(var.outputs[0])
    eps = rw.scalar(_other(add, var.outputs[0]) or "") if _is(add, "Add") else None
    if eps is None:
        return None
    sqrt = rw.sole_reader(add.outputs[0])
    if not _is(sqrt, "Sqrt"):
        return None
    nodes = [mean, sub, sq, var, add, sqrt]
    div = rw.sole_reader(sqrt.outputs[0])
    if _is(div, "Div") and div.inputs == [d, sqrt.outputs[0]]:
        nodes.append(div)
    elif _is(div, "Reciprocal"):
        mul = rw.sole_reader(div.outputs[0])
        if not _is(mul, "Mul") or _other(mul, div.outputs[0]) != d:
            return None
        nodes += [div, mul]
        div = mul
    else:
        return None
    if not rw.read_only_by(d, [sq, div]) or len(readers) != (2 if sq.op_type == "Pow" else 3):
        return None
    tail = xv.shape[axes[0] :]
    out, gamma, beta = div.outputs[0], np.ones(tail, np.float32), None
    nxt = rw.sole_reader(out)
    if _is(nxt, "Mul") and _other(nxt, out) and _affine(rw, _other(nxt, out), tail) is not None:
        gamma = _affine(rw, _other(nxt, out), tail)
        nodes.append(nxt)
        out = nxt.outputs[0]
        nxt = rw.sole_reader(out)
    if _is(nxt, "Add") and _other(nxt, out) and _affine(rw, _other(nxt, out), tail) is not None:
        beta = _affine(rw, _other(nxt, out), tail)
        nodes.append(nxt)
        out = nxt.outputs[0]
    if rw.value(out).shape != xv.shape:
        return None
    return nodes, {"x": x, "out": out, "gamma": gamma, "beta": beta, "axis": axes[0], "eps": eps}


def run(graph: Graph) -> Graph:
    rw = Rewriter(graph)
    opdef = for_onnx("LayerNormalization", 17)
    taken: set[int] = set()
    for mean in list(graph.nodes):
        if mean.op_type != "ReduceMean" or id(mean) in taken:
            continue
        found = _match(rw, mean)
        if found is None:
            continue
        nodes, m = found
        taken.update(id(n) for n in nodes)
        inputs = [m["x"], rw.add_const(f"{mean.name}/ln_scale", m["gamma"])]
        if m["beta"] is not None:
            inputs.append(rw.add_const(f"{mean.name}/ln_bias", m["beta"]))
        attrs = {"axis": m["axis"], "epsilon": m["eps"]}
        ln = Node(opdef, f"{nodes[-1].name}/layernorm", inputs, [m["out"]], attrs, origin=origin_of(nodes))
        rw.replace(nodes, ln, at=nodes[-1])
    return rw.finish()
