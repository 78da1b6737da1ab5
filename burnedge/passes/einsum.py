"""Einsum -> Transpose / Reshape / MatMul / ReduceSum / Mul, so every backend (and int8) runs it with ops it has.

Steps for one Einsum node:

1. parse the equation: each operand's letters (an ellipsis becomes fresh letters, aligned to the right, as
   broadcasting aligns them) and the output's (implicit form: the ellipsis, then the letters used once, sorted);
2. per operand: a repeated letter (a diagonal, ``ii->i``) is multiplied by an identity mask and summed over its
   second copy; a letter that neither the output nor a later operand uses is summed away (ReduceSum);
3. fold the operands left to right, two at a time: batch letters (in both and still needed), contracted letters
   (in both, needed nowhere else) and each side's own letters. Transpose each side to [batch, own, contracted] /
   [batch, contracted, own], Reshape to [batch..., M, K] / [batch..., K, N], MatMul (it broadcasts batch axes
   of size 1), Reshape to [batch..., own_a..., own_b...];
4. Transpose to the output's order (Identity when nothing is left to do).

Nodes of constants alone (a constant operand's Transpose or Reshape) are evaluated here, once. Grouped linear
layers (``btgi,gih->btgh``: DeepFilterNet) become one batched MatMul over the groups. An equation whose contracted
letter broadcasts (size 1 on one side only) is left as Einsum, with the reason `why_not` gives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Node, Value
from ..ops import for_onnx
from ..ops.interpreter import evaluate
from ._match import fresh_name

__all__ = ["parse", "run", "why_not"]

_FRESH = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # letters given to ellipsis axes (ONNX allows only lowercase and uppercase)


def parse(equation: str, ranks: list[int]) -> tuple[list[list[str]], list[str]]:
    """(letters of each operand, letters of the output); ellipsis axes get uppercase letters unused elsewhere."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"equation {equation!r} names {len(terms)} operand(s) for {len(ranks)} input(s)")
    spare = [c for c in _FRESH if c not in eq][::-1]
    n_ell = max((r - len(t.replace("...", "")) for t, r in zip(terms, ranks) if "..." in t), default=0)
    ell = [spare.pop() for _ in range(n_ell)] if n_ell <= len(spare) else None
    if ell is None:
        raise ValueError(f"equation {equation!r}: too many ellipsis axes")

    def expand(term: str, rank: int | None) -> list[str]:
        if "..." not in term:
            return list(term)
        head, _, tail = term.partition("...")
        k = n_ell if rank is None else rank - len(head) - len(tail)
        return list(head) + ell[n_ell - k :] + list(tail)

    ops = [expand(t, r) for t, r in zip(terms, ranks)]
    for t, r, letters in zip(terms, ranks, ops):
        if len(letters) != r:
            raise ValueError(f"equation {equation!r}: term {t!r} has {len(letters)} letters for rank {r}")
    if arrow:
        out = expand(rhs, None)
    else:
        counts: dict[str, int] = {}
        for letters in ops:
            for c in letters:
                counts[c] = counts.get(c, 0) + 1
        out = [c for c in ell if c in counts] + sorted(c for c, k in counts.items() if k == 1 and c not in ell)
    return ops, out


@dataclass
class _Operand:
    name: str
    letters: list[str]


class _Builder:
    """Emits the replacement nodes of one Einsum, with fresh value names under the node's name."""

    def __init__(self, graph: Graph, node: Node):
        self.graph, self.node, self.nodes = graph, node, []
        self.dtype = graph.values[node.inputs[0]].dtype

    def shape(self, name: str) -> tuple[int, ...]:
        return self.graph.values[name].shape

    def _fresh(self, kind: str) -> str:
        return fresh_name(self.graph, f"{self.node.name}/einsum/{kind}{len(self.nodes)}")

    def const(self, kind: str, arr: np.ndarray) -> str:
        name = self._fresh(kind)
        self.graph.values[name] = Value(name, arr.dtype, tuple(arr.shape), arr)
        return name

    def emit(self, op: str, inputs: list[str], shape: tuple[int, ...], attrs: dict | None = None, out: str = ""):
        opdef = for_onnx(op, self.graph.opset)
        if opdef is None:
            raise ValueError(f"no {op} at opset {self.graph.opset}")
        out = out or self._fresh(op.lower())
        if out not in self.graph.values:
            self.graph.values[out] = Value(out, self.dtype, tuple(shape))
        self.nodes.append(Node(opdef, f"{self.node.name}/{op}{len(self.nodes)}", inputs, [out], attrs or {}))
        return out

    def transpose(self, a: _Operand, order: list[str]) -> _Operand:
        if order == a.letters:
            return a
        perm = [a.letters.index(c) for c in order]
        shape = tuple(self.shape(a.name)[p] for p in perm)
        return _Operand(self.emit("Transpose", [a.name], shape, {"perm": perm}), order)

    def reshape(self, name: str, shape: tuple[int, ...]) -> str:
        if tuple(self.shape(name)) == tuple(shape):
            return name
        target = self.const("shape", np.array(shape, np.int64))
        return self.emit("Reshape", [name, target], shape)

    def reduce_sum(self, a: _Operand, drop: list[str]) -> _Operand:
        if not drop:
            return a
        axes = [a.letters.index(c) for c in drop]
        shape = tuple(d for i, d in enumerate(self.shape(a.name)) if i not in axes)
        opdef = for_onnx("ReduceSum", self.graph.opset)
        if opdef is not None and "axes" in opdef.attrs:
            name = self.emit("ReduceSum", [a.name], shape, {"axes": axes, "keepdims": 0})
        else:
            name = self.emit(
                "ReduceSum", [a.name, self.const("axes", np.array(axes, np.int64))], shape, {"keepdims": 0}
            )
        return _Operand(name, [c for c in a.letters if c not in drop])

    def diagonal(self, a: _Operand) -> _Operand:
        """Takes the diagonal of every repeated letter: x * identity mask, summed over the second copy."""
        while len(set(a.letters)) < len(a.letters):
            c = next(c for c in a.letters if a.letters.count(c) > 1)
            p, q = (i for i, x in enumerate(a.letters) if x == c)  # the first two copies
            shape = self.shape(a.name)
            n = shape[p]
            mask_shape = [1] * len(shape)
            mask_shape[p] = mask_shape[q] = n
            mask = self.const("eye", np.eye(n, dtype=self.dtype).reshape(mask_shape))
            masked = self.emit("Mul", [a.name, mask], shape)
            letters = list(a.letters)
            letters[q] = "\0"  # summed away below
            a = self.reduce_sum(_Operand(masked, letters), ["\0"])
        return a


def _size(shape: tuple[int, ...], letters: list[str], c: str) -> int:
    return shape[letters.index(c)]


def why_not(graph: Graph, node: Node) -> str | None:
    """The reason this pass leaves an Einsum node as it is (None when it rewrites it)."""
    ranks = [len(graph.values[n].shape) for n in node.inputs]
    try:
        ops, out = parse(node.attrs["equation"], ranks)
    except ValueError as exc:
        return str(exc)
    sizes: dict[str, set[int]] = {}
    for name, letters in zip(node.inputs, ops):
        for c, d in zip(letters, graph.values[name].shape):
            sizes.setdefault(c, set()).add(d)
    for c, s in sizes.items():
        if len(s) > 1 and (c not in out or len(s - {1}) > 1):
            return f"letter {c!r} has sizes {sorted(s)}: a contracted or mismatched axis that broadcasts"
    if graph.values[node.outputs[0]].dtype.kind not in "fiu":
        return f"dtype {graph.values[node.outputs[0]].dtype}"
    return None


def _rewrite(graph: Graph, node: Node) -> list[Node]:
    b = _Builder(graph, node)
    ops, out = parse(node.attrs["equation"], [len(graph.values[n].shape) for n in node.inputs])
    operands = [_Operand(n, letters) for n, letters in zip(node.inputs, ops)]

    def needed_after(k: int) -> set[str]:
        return set(out).union(*(set(o.letters) for o in operands[k + 1 :]))

    acc = b.diagonal(operands[0])
    acc = b.reduce_sum(acc, [c for c in acc.letters if c not in needed_after(0)])
    for k in range(1, len(operands)):
        rhs = b.diagonal(operands[k])
        later = needed_after(k)
        rhs = b.reduce_sum(rhs, [c for c in rhs.letters if c not in later and c not in acc.letters])
        acc = b.reduce_sum(acc, [c for c in acc.letters if c not in later and c not in rhs.letters])
        acc = _matmul(b, acc, rhs, later)
    y = node.outputs[0]
    acc = b.transpose(acc, out)
    if b.nodes and b.nodes[-1].outputs[0] == acc.name:  # the last node writes the Einsum's output itself
        b.nodes[-1].outputs = [y]
        del graph.values[acc.name]
    else:  # nothing to compute (an operand passed through): a view
        b.emit("Identity", [acc.name], graph.values[y].shape, out=y)
    return _fold(graph, b.nodes)


def _fold(graph: Graph, nodes: list[Node]) -> list[Node]:
    """Evaluates the new nodes that read only constants (a constant operand's transpose and reshape: weights
    are laid out once, here, instead of at every run); returns the others."""
    kept = []
    for node in nodes:
        if all(graph.values[n].is_const for n in node.inputs if n):
            out = evaluate(node, [graph.values[n].data for n in node.inputs])[0]
            graph.values[node.outputs[0]] = Value(node.outputs[0], out.dtype, out.shape, out)
        else:
            kept.append(node)
    return kept


def _matmul(b: _Builder, a: _Operand, c: _Operand, later: set[str]) -> _Operand:
    """a x c over their shared letters: batch letters stay (still needed), contracted ones are summed (MatMul);
    with nothing to sum, a broadcasting Mul."""
    shared = [x for x in a.letters if x in c.letters]
    batch = [x for x in shared if x in later]
    contract = [x for x in shared if x not in later]
    own_a = [x for x in a.letters if x not in shared]
    own_c = [x for x in c.letters if x not in shared]
    a = b.transpose(a, batch + own_a + contract)
    c = b.transpose(c, batch + contract + own_c)
    sa, sc = b.shape(a.name), b.shape(c.name)
    bsa = tuple(_size(sa, a.letters, x) for x in batch)
    bsc = tuple(_size(sc, c.letters, x) for x in batch)
    bs = tuple(max(x, y) for x, y in zip(bsa, bsc))
    dims_a = tuple(_size(sa, a.letters, x) for x in own_a)
    dims_c = tuple(_size(sc, c.letters, x) for x in own_c)
    if not contract:  # nothing summed: a broadcasting product (elementwise, outer)
        left = b.reshape(a.name, (*bsa, *dims_a, *(1,) * len(own_c)))
        right = b.reshape(c.name, (*bsc, *(1,) * len(own_a), *dims_c))
        return _Operand(b.emit("Mul", [left, right], (*bs, *dims_a, *dims_c)), batch + own_a + own_c)
    m = math.prod(_size(sa, a.letters, x) for x in own_a)
    n = math.prod(_size(sc, c.letters, x) for x in own_c)
    k = math.prod(_size(sa, a.letters, x) for x in contract)
    left = b.reshape(a.name, (*bsa, m, k))
    right = b.reshape(c.name, (*bsc, k, n))
    prod = b.emit("MatMul", [left, right], (*bs, m, n))
    return _Operand(b.reshape(prod, (*bs, *dims_a, *dims_c)), batch + own_a + own_c)


def run(graph: Graph) -> Graph:
    nodes: list[Node] = []
    for node in graph.nodes:
        if node.op_type == "Einsum" and not node.op.domain and why_not(graph, node) is None:
            nodes.extend(_rewrite(graph, node))
        else:
            nodes.append(node)
    graph.nodes = nodes
    return graph
