"""C backend vs onnxruntime on the ai.onnx.ml ops it lowers: Binarizer, ArrayFeatureExtractor, LabelEncoder with
numeric keys and values, and TreeEnsemble (every comparison mode, NaN routing, aggregations, post transforms,
float32 and float64); bad attributes are one-line errors naming the node."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge.backends.c.lower import LowerError

from .c_helpers import ONNX_TYPE

RNG = np.random.default_rng(23)


def _model(node, feeds: dict, out_type, ml_opset: int):
    ins = [helper.make_tensor_value_info(k, ONNX_TYPE[v.dtype], v.shape) for k, v in feeds.items()]
    graph = helper.make_graph([node], "g", ins, [helper.make_tensor_value_info("y", out_type, None)])
    opsets = [helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", ml_opset)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


def _check(node, feeds: dict, out_type, ml_opset: int, ort_runs: bool = True) -> None:
    """C vs onnxruntime, or vs the numpy reference where onnxruntime lacks the op for these types."""
    proto = _model(node, feeds, out_type, ml_opset)
    model = burnedge.load(proto)
    if ort_runs:
        want = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    else:
        want = burnedge.Session(model).run(feeds)["y"]
    got = burnedge.Session(model, backend="c").run(feeds)["y"]
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_binarizer(dtype):
    """float32 against onnxruntime, which has no other Binarizer; the other types against the reference."""
    x = (RNG.standard_normal((3, 17)) * 4).astype(dtype)
    x[0, :3] = 1  # on the threshold: not above it
    node = helper.make_node("Binarizer", ["x"], ["y"], domain="ai.onnx.ml", threshold=1.0)
    _check(node, {"x": x}, ONNX_TYPE[np.dtype(dtype)], 1, ort_runs=dtype == np.float32)


@pytest.mark.parametrize(("shape", "dtype"), [((5,), np.float32), ((3, 6), np.int64), ((2, 3, 7), np.float64)])
def test_array_feature_extractor(shape, dtype):
    x = (RNG.standard_normal(shape) * 9).astype(dtype)
    idx = np.array([shape[-1] - 1, 0, 2, 2], np.int64)
    node = helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain="ai.onnx.ml")
    _check(node, {"x": x, "i": idx}, ONNX_TYPE[np.dtype(dtype)], 1)


def test_array_feature_extractor_refuses_an_index_out_of_range():
    feeds = {"x": np.zeros((2, 4), np.float32), "i": np.array([1, 4], np.int64)}
    node = helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain="ai.onnx.ml")
    session = burnedge.Session(burnedge.load(_model(node, feeds, TensorProto.FLOAT, 1)), backend="c")
    with pytest.raises(burnedge.BurnedgeError, match="error 2"):
        session.run(feeds)


def _tensor(name: str, values, dtype) -> object:
    return numpy_helper.from_array(np.asarray(values, dtype), name)


LABEL_CASES = {  # name: (ml opset, x, attributes, y's type, whether onnxruntime has this LabelEncoder)
    "int64-float": (2, np.array([[3, -7, 12], [0, 3, 99]], np.int64),
                    dict(keys_int64s=[3, 12, -7, 5], values_floats=[0.5, -1.25, 2.0, 7.5], default_float=-9.0),
                    TensorProto.FLOAT, True),
    "float-int64": (2, np.array([0.25, np.nan, -1.5, 2.0, 0.0, -0.0], np.float32),
                    dict(keys_floats=[0.25, 0.0, -1.5, 8.0], values_int64s=[10, 20, 30, 40], default_int64=-4),
                    TensorProto.INT64, True),
    "double-int32": (4, np.array([1.5, np.nan, 7.0, -3.0, 1e300], np.float64),
                     dict(keys_tensor=_tensor("k", [1.5, np.nan, 1e300, 2.0], np.float64),
                          values_tensor=_tensor("v", [5, 6, 7, 8], np.int32),
                          default_tensor=_tensor("d", [-1], np.int32)), TensorProto.INT32, False),
    "int64-int64": (4, np.arange(-5, 20, dtype=np.int64).reshape(5, 5),
                    dict(keys_tensor=_tensor("k", np.arange(19, -6, -2), np.int64),
                         values_tensor=_tensor("v", np.arange(13) * 3, np.int64),
                         default_tensor=_tensor("d", [0], np.int64)), TensorProto.INT64, True),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(LABEL_CASES))
def test_label_encoder_numeric(case):
    """Against onnxruntime, or the reference for the type pairs onnxruntime 1.32 has no LabelEncoder for."""
    opset, x, attrs, out_type, ort_runs = LABEL_CASES[case]
    node = helper.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", **attrs)
    _check(node, {"x": x}, out_type, opset, ort_runs=ort_runs)


def test_label_encoder_refuses_keys_not_exact_in_the_input_type():
    feeds = {"x": np.zeros(3, np.int64)}
    node = helper.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", name="enc",
                            keys_tensor=_tensor("k", [1.5, 2.0], np.float64), values_int64s=[1, 2])  # fmt: skip
    with pytest.raises(LowerError, match=r"'enc' \(LabelEncoder\): the keys are not all exact in int64"):
        burnedge.Session(burnedge.load(_model(node, feeds, TensorProto.INT64, 4)), backend="c")


def _forest(dtype, modes, aggregate=1, post=0, n_targets=3, nan_true=True):
    """Two trees over 3 features: tree 0 is a chain of three tests, tree 1 a single test; 6 leaves."""
    splits = np.array([0.5, -0.25, 1.0, 0.0], dtype)
    attrs = dict(
        nodes_featureids=[0, 1, 2, 1], nodes_modes=numpy_helper.from_array(np.array(modes, np.uint8), "m"),
        nodes_splits=numpy_helper.from_array(splits, "s"), nodes_truenodeids=[1, 0, 2, 3],
        nodes_trueleafs=[0, 1, 1, 1], nodes_falsenodeids=[2, 1, 4, 5], nodes_falseleafs=[0, 1, 1, 1],
        nodes_missing_value_tracks_true=[int(nan_true), 0, int(nan_true), 0], tree_roots=[0, 3],
        leaf_targetids=[0, 1, 2, 0, 1, 2][: 6], leaf_weights=numpy_helper.from_array(
            np.array([1.5, -2.0, 0.25, 3.0, -0.5, 4.0], dtype), "w"),
        n_targets=n_targets, aggregate_function=aggregate, post_transform=post,
    )  # fmt: skip
    if 6 in modes:
        attrs["membership_values"] = numpy_helper.from_array(np.array([0.5, 1.5, np.nan], dtype), "mv")
    return helper.make_node("TreeEnsemble", ["x"], ["y"], domain="ai.onnx.ml", **attrs)


def _rows(dtype):
    x = RNG.choice([-1.0, -0.25, 0.0, 0.5, 1.0, 1.5, 2.0], (40, 3)).astype(dtype)
    x[::7, 0] = np.nan
    x[3::9, 2] = np.nan
    return x


@pytest.mark.parametrize("modes", [[0, 1, 2, 3], [4, 5, 0, 1], [6, 0, 5, 4]], ids=["order", "equal", "member"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tree_ensemble_modes(modes, dtype):
    _check(_forest(dtype, modes), {"x": _rows(dtype)}, ONNX_TYPE[np.dtype(dtype)], 5)


@pytest.mark.parametrize("aggregate", [0, 1, 2, 3], ids=["average", "sum", "min", "max"])
def test_tree_ensemble_aggregates(aggregate):
    node = _forest(np.float32, [0, 1, 2, 3], aggregate, n_targets=4, nan_true=False)
    _check(node, {"x": _rows(np.float32)}, TensorProto.FLOAT, 5)


@pytest.mark.parametrize("post", [1, 2, 3], ids=["softmax", "logistic", "softmax_zero"])
def test_tree_ensemble_post_transforms(post):
    """Against the reference: onnxruntime 1.32 numbers post_transform otherwise than the spec (its 1 is LOGISTIC,
    the spec's SOFTMAX), and onnx's own evaluator ignores the attribute."""
    node = _forest(np.float64, [0, 1, 2, 3], 0, post, n_targets=4, nan_true=False)
    _check(node, {"x": _rows(np.float64)}, TensorProto.DOUBLE, 5, ort_runs=False)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (dict(nodes_featureids=[0, 1, 3, 1]), "a feature id is outside [0, 3)"),
        (dict(nodes_truenodeids=[1, 0, 2, 9]), "a child id is outside the nodes or leaves it names"),
        (dict(nodes_falsenodeids=[0, 1, 4, 5], nodes_falseleafs=[0, 1, 1, 1]), "the trees loop back to node 0"),
        (dict(aggregate_function=7), "aggregate_function is 7"),
        (dict(leaf_targetids=[0, 1, 2, 0, 1, 5]), "a leaf target is outside [0, 3)"),
    ],
)
def test_tree_ensemble_bad_attributes_name_the_node(change, message):
    node = _forest(np.float32, [0, 1, 2, 3])
    node.name = "forest"
    for key, value in change.items():
        del node.attribute[[a.name for a in node.attribute].index(key)]
        node.attribute.append(helper.make_attribute(key, value))
    feeds = {"x": _rows(np.float32)}
    with pytest.raises(LowerError) as exc:
        burnedge.Session(burnedge.load(_model(node, feeds, TensorProto.FLOAT, 5)), backend="c")
    assert "'forest' (TreeEnsemble)" in str(exc.value) and message in str(exc.value), str(exc.value)
