"""C backend NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against torch's nll_loss / cross_entropy.

Shapes the node tests do not have (odd C, several trailing axes, one big enough for two threads to split it),
weights as a constant and as a graph input, ignore_index inside and outside [0, C), int32 and int64 targets,
float32 and float64 values, and SoftmaxCrossEntropyLoss's log_prob output against torch's log_softmax.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

import burnedge

RNG = np.random.default_rng(17)
ONNX_TYPE = {np.float16: TensorProto.FLOAT16, np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
             np.int32: TensorProto.INT32, np.int64: TensorProto.INT64}  # fmt: skip


def _case(shape, dtype, tdtype, ignore_index):
    """Scores [N, C, ...], targets [N, ...] in [0, C) with about a quarter set to ignore_index, weights [C]."""
    x = (RNG.standard_normal(shape) * 3).astype(dtype)
    c = shape[1]
    t = RNG.integers(0, c, (shape[0], *shape[2:]))
    if ignore_index is not None:
        t[RNG.random(t.shape) < 0.25] = ignore_index
    w = RNG.uniform(0.1, 2.0, c).astype(dtype)
    return x, t.astype(tdtype), w


def _run_c(op, x, t, w, weight_as, reduction, ignore_index, log_prob=False, threads=1):
    """One-node model run by the C backend; `weight_as` is None, 'const' or 'input'."""
    attrs = {"reduction": reduction}
    if ignore_index is not None:
        attrs["ignore_index"] = ignore_index
    ins = ["x", "t"] + (["w"] if weight_as else [])
    outs = ["loss"] + (["log_prob"] if log_prob else [])
    feeds = {"x": x, "t": t}
    vi = [helper.make_tensor_value_info("x", ONNX_TYPE[x.dtype.type], x.shape),
          helper.make_tensor_value_info("t", ONNX_TYPE[t.dtype.type], t.shape)]  # fmt: skip
    inits = []
    if weight_as == "const":
        inits.append(numpy_helper.from_array(w, "w"))
    elif weight_as == "input":
        vi.append(helper.make_tensor_value_info("w", ONNX_TYPE[w.dtype.type], w.shape))
        feeds["w"] = w
    out_vi = [helper.make_tensor_value_info(o, ONNX_TYPE[x.dtype.type], None) for o in outs]
    g = helper.make_graph([helper.make_node(op, ins, outs, **attrs)], "loss", vi, out_vi, inits)
    opset = 13 if op == "SoftmaxCrossEntropyLoss" else 22
    model = burnedge.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]))
    return burnedge.Session(model, backend="c", threads=threads).run(feeds)


def _torch(fn, x, t, w, reduction, ignore_index):
    return fn(
        torch.from_numpy(x),
        torch.from_numpy(t.astype(np.int64)),
        weight=None if w is None else torch.from_numpy(w),
        reduction=reduction,
        ignore_index=-100 if ignore_index is None else ignore_index,
    ).numpy()


def _close(got, want, dtype):
    assert got.dtype == dtype and got.shape == want.shape, (got.dtype, got.shape, want.shape)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.abs(want).max(initial=0))))


CASES = [
    # shape, dtype, target dtype, ignore_index, weight_as, reduction
    ((5, 7), np.float32, np.int64, None, None, "mean"),
    ((3, 11, 5), np.float32, np.int32, 2, "const", "mean"),
    ((2, 3, 5, 7), np.float32, np.int64, -1, "input", "none"),
    ((4, 5, 3, 2, 3), np.float32, np.int32, 9, "input", "sum"),
    ((1, 13, 17), np.float64, np.int64, 0, "const", "mean"),
    ((3, 6, 4, 5), np.float64, np.int32, None, None, "sum"),
]
IDS = [
    f"{'x'.join(map(str, s))}-{np.dtype(d).name}-{np.dtype(td).name}-ii{ii}-w{wa}-{r}" for s, d, td, ii, wa, r in CASES
]


@pytest.mark.parametrize("shape,dtype,tdtype,ii,weight_as,reduction", CASES, ids=IDS)
def test_nll_loss_matches_torch(shape, dtype, tdtype, ii, weight_as, reduction):
    x, t, w = _case(shape, dtype, tdtype, ii)
    logp = torch.log_softmax(torch.from_numpy(x), 1).numpy()  # NLL reads log-probabilities
    got = _run_c("NegativeLogLikelihoodLoss", logp, t, w, weight_as, reduction, ii)
    _close(got["loss"], _torch(torch.nn.functional.nll_loss, logp, t, w if weight_as else None, reduction, ii), dtype)


@pytest.mark.parametrize("shape,dtype,tdtype,ii,weight_as,reduction", CASES, ids=IDS)
@pytest.mark.parametrize("log_prob", [False, True], ids=["loss", "log_prob"])
def test_softmax_cross_entropy_matches_torch(shape, dtype, tdtype, ii, weight_as, reduction, log_prob):
    x, t, w = _case(shape, dtype, tdtype, ii)
    got = _run_c("SoftmaxCrossEntropyLoss", x, t, w, weight_as, reduction, ii, log_prob=log_prob)
    want = _torch(torch.nn.functional.cross_entropy, x, t, w if weight_as else None, reduction, ii)
    _close(got["loss"], want, dtype)
    if log_prob:
        _close(got["log_prob"], torch.log_softmax(torch.from_numpy(x), 1).numpy(), dtype)


@pytest.mark.parametrize("op", ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"])
def test_two_threads_split_the_batch(op):
    """reduction none over 4 x 11 x 33 x 31 values: the batch rows are split between two threads."""
    x, t, w = _case((4, 11, 33, 31), np.float32, np.int64, 3)
    if op == "NegativeLogLikelihoodLoss":
        x = torch.log_softmax(torch.from_numpy(x), 1).numpy()
        fn = torch.nn.functional.nll_loss
    else:
        fn = torch.nn.functional.cross_entropy
    got = _run_c(op, x, t, w, "const", "none", 3, threads=2)
    _close(got["loss"], _torch(fn, x, t, w, "none", 3), np.float32)


def test_every_target_ignored_gives_nan_mean():
    """mean with every target ignored divides 0 by a weight sum of 0: NaN, as torch gives."""
    x, _, w = _case((3, 4, 5), np.float32, np.int64, None)
    t = np.full((3, 5), 2, np.int64)
    got = _run_c("SoftmaxCrossEntropyLoss", x, t, w, "const", "mean", 2)
    want = _torch(torch.nn.functional.cross_entropy, x, t, w, "mean", 2)
    assert np.isnan(want) and np.isnan(got["loss"])


def test_float16_runs_in_float32_and_rounds_back():
    """float16 scores: the loss is computed in float32 and stored as float16 (the C backend's widening), like
    torch on the same values in float32, rounded to float16."""
    x, t, w = _case((4, 5), np.float16, np.int64, None)
    got = _run_c("NegativeLogLikelihoodLoss", x, t, w, None, "sum", None)["loss"]
    want = _torch(torch.nn.functional.nll_loss, x.astype(np.float32), t, None, "sum", None).astype(np.float16)
    assert got.dtype == np.float16 and got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3)
