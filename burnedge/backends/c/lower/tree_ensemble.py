"""TreeEnsemble (ai.onnx.ml, opset 5) on kernels/reference/tree_ensemble.c: the attributes become constant tables.

Every id the kernel follows is checked here, so a bad attribute is a one-line error naming the node, never a read
out of bounds: features against x's columns, child ids against the nodes or the leaves, leaf targets against
n_targets, and the trees must be trees (a walk that could loop forever is refused). BRANCH_MEMBER sets are split
from membership_values exactly as the reference splits them.
"""

from __future__ import annotations

import numpy as np

from ....ir import Graph, Node
from ....ops.ml import _members
from . import Ctx, LowerError, lower
from .reduce import attr

__all__: list[str] = []

_NODE_ATTRS = ("nodes_featureids", "nodes_splits", "nodes_truenodeids", "nodes_falsenodeids", "nodes_trueleafs",
               "nodes_falseleafs")  # fmt: skip


def _ints(node: Node, name: str, default=None) -> np.ndarray:
    v = attr(node, name, default)
    return np.asarray([] if v is None else v).reshape(-1).astype(np.int64)


def _scratch(graph: Graph, node: Node) -> int:
    return max(1, int(attr(node, "n_targets", 1))) * 8


def _loops(roots: np.ndarray, child: np.ndarray, is_leaf: np.ndarray) -> int | None:
    """A node from which a walk can come back to itself (an id, or None): depth-first over the decision nodes
    reachable from the roots, a child still on the path closing a loop."""
    state = np.zeros(len(child), np.int8)  # 0 unseen, 1 on the path, 2 done
    for root in roots.tolist():
        if state[root]:
            continue
        stack = [(root, 0)]
        state[root] = 1
        while stack:
            at, k = stack.pop()
            if k == 2:
                state[at] = 2
                continue
            stack.append((at, k + 1))
            if is_leaf[at, k]:
                continue
            nxt = int(child[at, k])
            if state[nxt] == 1:
                return nxt
            if state[nxt] == 0:
                state[nxt] = 1
                stack.append((nxt, 0))
    return None


@lower("TreeEnsemble", domain="ai.onnx.ml", scratch=_scratch)
def tree_ensemble(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    dt = ctx.dtype(x).name
    ctx.require(dt in ("float32", "float64"), f"no C TreeEnsemble on {dt} (float32 or float64)")
    shape = ctx.shape(x)
    ctx.require(len(shape) == 2, f"x has shape {list(shape)}, expected [N, F]")
    feats = shape[1]
    modes = _ints(node, "nodes_modes")
    n = len(modes)
    for name in _NODE_ATTRS:
        got = np.asarray(attr(node, name, [])).size
        ctx.require(got == n, f"{name} has {got} values for {n} nodes")
    missing = _ints(node, "nodes_missing_value_tracks_true")
    missing = missing if len(missing) else np.zeros(n, np.int64)
    ctx.require(len(missing) == n, f"nodes_missing_value_tracks_true has {len(missing)} values for {n} nodes")
    targets, weights = _ints(node, "leaf_targetids"), np.asarray(attr(node, "leaf_weights"), np.float64).reshape(-1)
    n_leaves, n_targets = len(targets), int(attr(node, "n_targets"))
    ctx.require(len(weights) == n_leaves, f"{len(weights)} leaf_weights for {n_leaves} leaf_targetids")
    ctx.require(n_targets >= 1, f"n_targets is {n_targets}, expected >= 1")
    ctx.require(bool(((targets >= 0) & (targets < n_targets)).all()), f"a leaf target is outside [0, {n_targets})")
    aggregate, post = int(attr(node, "aggregate_function", 1)), int(attr(node, "post_transform", 0))
    ctx.require(0 <= aggregate <= 3, f"aggregate_function is {aggregate}, expected 0..3 (AVERAGE, SUM, MIN, MAX)")
    ctx.require(0 <= post <= 3, f"post_transform is {post}, expected 0..3 (NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO)")
    ctx.require(bool(((modes >= 0) & (modes <= 6)).all()), "a node mode is outside 0..6")
    feature = _ints(node, "nodes_featureids")
    child = np.stack([_ints(node, "nodes_truenodeids"), _ints(node, "nodes_falsenodeids")], axis=1)
    is_leaf = np.stack([_ints(node, "nodes_trueleafs"), _ints(node, "nodes_falseleafs")], axis=1) != 0
    roots = _ints(node, "tree_roots")
    ctx.require(len(roots) >= 1, "tree_roots is empty")
    ctx.require(bool(((roots >= 0) & (roots < n)).all()), f"a tree root is outside the {n} nodes")
    single = is_leaf[roots].all(axis=1) & (child[roots, 0] == child[roots, 1])  # a tree that is one leaf
    decision = np.ones(n, bool)  # the nodes whose feature is read: all but the roots of one-leaf trees
    decision[roots[single]] = False
    bound = np.where(is_leaf, n_leaves, n)
    ctx.require(bool(((child >= 0) & (child < bound)).all()), "a child id is outside the nodes or leaves it names")
    ctx.require(bool(((feature >= 0) & (feature < feats))[decision].all()), f"a feature id is outside [0, {feats})")
    loop = _loops(roots[~single], child, is_leaf)
    ctx.require(loop is None, f"the trees loop back to node {loop}")
    try:
        members = _members(modes.tolist(), attr(node, "membership_values"))
    except ValueError as exc:
        raise LowerError(f"C backend cannot run node {node.name!r} ({node.op_type}): {exc}") from None
    table = np.zeros((n, 9), np.int64)
    table[:, 0], table[:, 1], table[:, 2:4], table[:, 4:6], table[:, 6] = modes, feature, child, is_leaf, missing
    sets, start = [], 0
    for k, vals in sorted(members.items()):
        table[k, 7], table[k, 8] = start, len(vals)
        sets.append(vals)
        start += len(vals)
    root_ids = np.where(single, -1 - child[roots, 0], roots)
    splits = np.asarray(attr(node, "nodes_splits"), np.float64).reshape(-1)
    key = f"tree:{node.name}"
    fields = [
        str(n), str(len(roots)), str(n_targets), ctx.pack(f"{key}:roots", root_ids), ctx.pack(f"{key}:nodes", table),
        ctx.pack(f"{key}:splits", splits), ctx.pack(f"{key}:sets", np.concatenate([*sets, np.zeros(1)])),
        ctx.pack(f"{key}:targets", targets), ctx.pack(f"{key}:weights", weights), str(aggregate), str(post),
    ]  # fmt: skip
    if ctx.size(y) == 0:
        return "/* empty */"
    call = f"be_tree_ensemble({ctx.tensor(x)}, {int(dt == 'float64')}, {ctx.tensor(y)}, {shape[0]}, {feats}, &te, "
    return "\n".join(["{", f"  const be_forest te = {{{', '.join(fields)}}};",
                      f"  if ({call}{ctx.scratch('double')})) return 2;", "}"])  # fmt: skip
