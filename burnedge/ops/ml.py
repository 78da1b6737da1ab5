"""Classical ML ops (domain ai.onnx.ml), as scikit-learn exporters write them: ArrayFeatureExtractor, Binarizer,
LabelEncoder and TreeEnsemble.

Spec: https://onnx.ai/onnx/operators/ (ai.onnx.ml). Versions: ArrayFeatureExtractor 1, Binarizer 1, LabelEncoder
1 (strings <-> int64), 2 (floats too), 4 (keys and values as tensors, any dtype), TreeEnsemble 5.
"""

from __future__ import annotations

import math

import numpy as np

from . import Spec, register

__all__: list[str] = []

ML = "ai.onnx.ml"


@register("ArrayFeatureExtractor", since=1, domain=ML)
def array_feature_extractor(x, y):
    """ArrayFeatureExtractor 1: the columns `y` of the last axis of x; a 1-D x gives a [1, len(y)] row."""
    out = np.take(x, np.asarray(y, np.int64).reshape(-1), axis=-1)
    return out.reshape(1, -1) if x.ndim == 1 else out


@register("Binarizer", since=1, domain=ML, tags=("elementwise",))
def binarizer(x, *, threshold=0.0):
    """Binarizer 1: 1 where x > threshold, else 0, in x's dtype."""
    return (x > threshold).astype(x.dtype)


# -- LabelEncoder -------------------------------------------------------------------------------------------------
def _label_table(attrs: dict) -> tuple[list, np.ndarray, object]:
    """(keys, values as an array of the output dtype, default) from any version's attributes."""
    found = [k for k in ("keys_tensor", "keys_strings", "keys_int64s", "keys_floats") if attrs.get(k) is not None]
    keys = list(np.asarray(attrs[found[0]]).reshape(-1)) if found else None
    kinds = {"values_strings": object, "values_int64s": np.int64, "values_floats": np.float32}
    values = None
    if attrs.get("values_tensor") is not None:
        values = np.asarray(attrs["values_tensor"]).reshape(-1)
    else:
        for k, dt in kinds.items():
            if attrs.get(k) is not None:
                values = np.array(list(attrs[k]), dtype=dt)
                break
    if keys is None or values is None:
        raise ValueError("LabelEncoder needs keys_* and values_* attributes")
    if len(keys) != len(values):
        raise ValueError(f"LabelEncoder has {len(keys)} keys and {len(values)} values")
    if attrs.get("default_tensor") is not None:
        default = np.asarray(attrs["default_tensor"]).reshape(-1)[0]
    elif values.dtype == object:
        default = attrs.get("default_string", "_Unused")
    elif values.dtype.kind in "iu":
        default = attrs.get("default_int64", -1)
    else:
        default = attrs.get("default_float", -0.0)
    return keys, values, default


def _key(v):
    """A dict key under which every NaN is the same key (LabelEncoder 4 matches NaN to NaN)."""
    return "nan" if isinstance(v, float) and math.isnan(v) else v


def _label_encode(x, attrs):
    keys, values, default = _label_table(attrs)
    table = {_key(k.item() if isinstance(k, np.generic) else k): v for k, v in zip(keys, values)}
    flat = [table.get(_key(v.item() if isinstance(v, np.generic) else v), default) for v in x.reshape(-1)]
    return np.array(flat, dtype=values.dtype).reshape(x.shape)


@register("LabelEncoder", since=1, domain=ML)
def label_encoder_v1(x, *, classes_strings=None, default_int64=-1, default_string="_Unused"):
    """LabelEncoder 1: strings -> their index in classes_strings, or int64 -> that class string."""
    classes = list(classes_strings or [])
    if x.dtype == object:
        return _label_encode(x, {"keys_strings": classes, "values_int64s": list(range(len(classes))),
                                 "default_int64": default_int64})  # fmt: skip
    return _label_encode(x, {"keys_int64s": list(range(len(classes))), "values_strings": classes,
                             "default_string": default_string})  # fmt: skip


@register("LabelEncoder", since=2, domain=ML)
def label_encoder_v2(
    x, *, default_float=-0.0, default_int64=-1, default_string="_Unused", keys_floats=None, keys_int64s=None,
    keys_strings=None, values_floats=None, values_int64s=None, values_strings=None,
):  # fmt: skip
    """LabelEncoder 2: a map from keys_* to values_* (strings, int64 or floats); unknown keys get default_*."""
    return _label_encode(x, dict(locals()))


@register("LabelEncoder", since=4, domain=ML)
def label_encoder(
    x, *, default_float=-0.0, default_int64=-1, default_string="_Unused", default_tensor=None, keys_floats=None,
    keys_int64s=None, keys_strings=None, keys_tensor=None, values_floats=None, values_int64s=None,
    values_strings=None, values_tensor=None,
):  # fmt: skip
    """LabelEncoder 4: as 2, keys and values may also be tensors of any type (default_tensor then)."""
    return _label_encode(x, dict(locals()))


# -- TreeEnsemble -------------------------------------------------------------------------------------------------
_COMPARE = {
    0: np.less_equal,  # BRANCH_LEQ
    1: np.less,  # BRANCH_LT
    2: np.greater_equal,  # BRANCH_GTE
    3: np.greater,  # BRANCH_GT
    4: np.equal,  # BRANCH_EQ
    5: np.not_equal,  # BRANCH_NEQ
}
_AGGREGATE = {0: "AVERAGE", 1: "SUM", 2: "MIN", 3: "MAX"}


def _members(modes, membership_values) -> dict[int, np.ndarray]:
    """Per BRANCH_MEMBER node (mode 6), its set: membership_values holds the sets in node order, NaN-separated."""
    member_nodes = [i for i, m in enumerate(modes) if m == 6]
    if not member_nodes:
        return {}
    if membership_values is None:
        raise ValueError("TreeEnsemble has BRANCH_MEMBER nodes but no membership_values")
    vals = np.asarray(membership_values, np.float64).reshape(-1)
    cuts = np.flatnonzero(np.isnan(vals))
    if len(cuts) != len(member_nodes):
        raise ValueError(f"membership_values holds {len(cuts)} sets for {len(member_nodes)} BRANCH_MEMBER nodes")
    bounds = [-1, *cuts.tolist()]
    return {node: vals[bounds[k] + 1 : bounds[k + 1]] for k, node in enumerate(member_nodes)}


def _leaves(x, a) -> list[np.ndarray]:
    """Per tree, the leaf index each row of x reaches (all rows walk the tree together)."""
    modes = np.asarray(a["nodes_modes"]).reshape(-1).astype(np.int64)
    splits = np.asarray(a["nodes_splits"], np.float64).reshape(-1)
    feats, t_ids, f_ids = a["nodes_featureids"], a["nodes_truenodeids"], a["nodes_falsenodeids"]
    t_leaf, f_leaf = a["nodes_trueleafs"], a["nodes_falseleafs"]
    missing = a.get("nodes_missing_value_tracks_true") or [0] * len(modes)
    members = _members(modes, a.get("membership_values"))
    xs = x.astype(np.float64)
    rows = np.arange(len(x))
    out = []
    for root in a["tree_roots"]:
        if t_leaf[root] and f_leaf[root] and t_ids[root] == f_ids[root]:  # a tree that is a single leaf
            out.append(np.full(len(x), t_ids[root], np.int64))
            continue
        at = np.full(len(x), root, np.int64)  # current node (or leaf, once done)
        done = np.zeros(len(x), bool)
        while not done.all():
            for node in np.unique(at[~done]):
                sel = rows[(at == node) & ~done]
                v = xs[sel, feats[node]]
                mode = modes[node]
                go = np.isin(v, members[node]) if mode == 6 else _COMPARE[mode](v, splits[node])
                go |= bool(missing[node]) & np.isnan(v)
                at[sel] = np.where(go, t_ids[node], f_ids[node])
                done[sel] = np.where(go, t_leaf[node], f_leaf[node]).astype(bool)
        out.append(at)
    return out


def _post(y: np.ndarray, post_transform: int) -> np.ndarray:
    if post_transform == 0:
        return y
    if post_transform == 2:  # LOGISTIC
        return 1 / (1 + np.exp(-y))
    if post_transform in (1, 3):  # SOFTMAX, SOFTMAX_ZERO (zeros stay zero)
        keep = np.ones_like(y, bool) if post_transform == 1 else y != 0
        e = np.where(keep, np.exp(y - np.max(np.where(keep, y, -np.inf), axis=1, keepdims=True)), 0)
        s = e.sum(axis=1, keepdims=True)
        return e / np.where(s == 0, 1, s)
    raise ValueError(f"TreeEnsemble post_transform {post_transform} is not supported (NONE, SOFTMAX, LOGISTIC, "
                     "SOFTMAX_ZERO)")  # fmt: skip


def _tree_infer(x, **a):
    return [Spec((x.shape[0], int(a["n_targets"])), x.dtype)]


@register("TreeEnsemble", since=5, domain=ML, infer=_tree_infer)
def tree_ensemble(
    x, *, aggregate_function=1, leaf_targetids, leaf_weights, membership_values=None, n_targets, nodes_falseleafs,
    nodes_falsenodeids, nodes_featureids, nodes_hitrates=None, nodes_missing_value_tracks_true=None, nodes_modes,
    nodes_splits, nodes_trueleafs, nodes_truenodeids, post_transform=0, tree_roots,
):  # fmt: skip
    """TreeEnsemble 5: every tree maps a row [N, F] to one leaf, whose weight goes to its target; the trees'
    weights aggregate per target (SUM, AVERAGE, MIN, MAX), then post_transform. Y [N, n_targets] in x's dtype."""
    if aggregate_function not in _AGGREGATE:
        raise ValueError(f"aggregate_function must be 0..3 (AVERAGE, SUM, MIN, MAX), not {aggregate_function}")
    if x.ndim != 2:
        raise ValueError(f"TreeEnsemble takes [N, F] rows, not shape {list(x.shape)}")
    kind = _AGGREGATE[aggregate_function]
    weights = np.asarray(leaf_weights, np.float64).reshape(-1)
    targets = np.asarray(leaf_targetids, np.int64)
    init = {"SUM": 0.0, "AVERAGE": 0.0, "MIN": np.inf, "MAX": -np.inf}[kind]
    y = np.full((len(x), int(n_targets)), init)
    rows = np.arange(len(x))
    for leaf in _leaves(x, dict(locals())):
        w, t = weights[leaf], targets[leaf]
        if kind in ("SUM", "AVERAGE"):
            np.add.at(y, (rows, t), w)
        else:
            (np.minimum if kind == "MIN" else np.maximum).at(y, (rows, t), w)
    if kind == "AVERAGE":
        y /= len(tree_roots)
    y = np.where(np.isinf(y), 0.0, y)  # a target no tree reached
    return _post(y, post_transform).astype(x.dtype)
