"""Calibrators on known distributions, their determinism, and calibration runs over a small graph."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge.errors import BurnedgeError, InputError
from burnedge.quantize import (
    CALIBRATORS,
    MSE,
    Calibrator,
    Entropy,
    MinMax,
    Percentile,
    collect,
    layers,
    make_calibrator,
)
from burnedge.quantize.calibrate import _Histogram

from .helpers import mlp


def _gauss(n: int = 100_000, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def _laplace(n: int = 200_000, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).laplace(size=n).astype(np.float32)


def _run(cal: Calibrator, data: np.ndarray, batches: int = 4) -> tuple[float, float]:
    for part in np.array_split(data, batches):
        cal.observe("t", part)
    return cal.compute()["t"]


def _bytes(ranges: dict[str, tuple[float, float]]) -> bytes:
    return b"".join(name.encode() + struct.pack("<dd", *r) for name, r in ranges.items())


def test_minmax_is_exact():
    x = _gauss()
    assert _run(MinMax(), x) == (float(x.min()), float(x.max()))


def test_percentile_clips_an_outlier():
    x = _gauss()
    x[123] = 1000.0
    lo, hi = _run(Percentile(99.99), x)
    assert 3.5 < hi < 5.0 and lo == -hi  # one threshold on |x| for both sides
    assert -hi > float(x.min())
    assert _run(Percentile(100.0), x) == (float(x.min()), 1000.0)


@pytest.mark.parametrize("cls", [Entropy, MSE])
def test_entropy_and_mse_clip_inside_the_range(cls):
    x = _laplace()
    lo, hi = _run(cls(), x)
    assert float(x.min()) < lo < -5.0 and 5.0 < hi < float(x.max())
    relu = np.maximum(x, 0)
    lo, hi = _run(cls(), relu)
    assert lo == 0.0 and 5.0 < hi < float(relu.max())


@pytest.mark.parametrize("name", sorted(CALIBRATORS))
def test_sparse_one_signed_tensor_far_from_zero(name):
    # 80 probabilities in [0.05, 0.15]: clipping everything onto one edge bin must not look like a perfect fit
    x = np.random.default_rng(8).uniform(0.05, 0.15, 80).astype(np.float32)
    lo, hi = _run(make_calibrator(name), x, batches=8)
    assert lo <= hi and hi > 0.1


def test_mse_finds_the_known_optimal_clipping():
    # Banner et al. (ACIQ): for 8 bits the MSE-optimal clip is 3.92 sigma (Gaussian) and 9.89 b (Laplace)
    lo, hi = _run(MSE(), _gauss(400_000, seed=2))
    assert -hi == lo and 3.8 < hi < 4.05
    lo, hi = _run(MSE(), _laplace(400_000, seed=3))
    assert -hi == lo and 9.5 < hi < 10.3


@pytest.mark.parametrize("name", sorted(CALIBRATORS))
def test_ranges_are_byte_identical_across_runs_and_batchings(name):
    x = _laplace(100_000)
    y = np.maximum(_gauss(100_000), 0) * 3
    results = []
    for parts in (1, 3, 7):
        cal = make_calibrator(name)
        for i, (a, b) in enumerate(zip(np.array_split(x, parts), np.array_split(y, parts))):
            pair = [("x", a), ("y", b)] if i % 2 else [("y", b), ("x", a)]
            for n, arr in sorted(pair):
                cal.observe(n, arr)
        results.append(_bytes(cal.compute()))
    shuffled = make_calibrator(name)
    for part in np.array_split(x, 5)[::-1]:
        shuffled.observe("x", part)
    for part in np.array_split(y, 5)[::-1]:
        shuffled.observe("y", part)
    results.append(_bytes(shuffled.compute()))
    assert len(set(results)) == 1


def test_histogram_merges_exactly_when_the_range_grows():
    rng = np.random.default_rng(4)
    parts = [rng.standard_normal(5000) * 10.0**k for k in (-3, 0, 2, -1, 4)]
    grown = _Histogram(256)
    for p in parts:
        grown.add(p)
    once = _Histogram(256)
    once.add(np.concatenate(parts))
    assert grown.k == once.k
    assert np.array_equal(grown.pos, once.pos) and np.array_equal(grown.neg, once.neg)
    assert grown.pos.sum() + grown.neg.sum() == 25000


@pytest.mark.parametrize("scale", [1.0, 1e-38, 1e30])
def test_histogram_is_exact_in_float32_float64_and_float16(scale):
    x = (np.random.default_rng(6).standard_normal(4000) * scale).astype(np.float32)
    hists = []
    for arr in (x, x.astype(np.float64)):
        h = _Histogram(512)
        h.add(arr)
        hists.append((h.k, h.pos.tobytes(), h.neg.tobytes(), h.zeros))
    assert hists[0] == hists[1]
    half = x.astype(np.float16) if scale == 1.0 else None
    if half is not None:
        cal16, cal32 = Percentile(99.0), Percentile(99.0)
        cal16.observe("t", half)
        cal32.observe("t", half.astype(np.float32))
        assert cal16.compute() == cal32.compute()


def test_non_finite_values_are_left_out_and_counted():
    cal = Percentile()
    x = np.array([-np.inf, 1.0, -2.0, np.nan, 0.5], np.float32)
    cal.observe("m", x)
    assert cal.compute()["m"] == (-2.0, 1.0)
    assert cal.nonfinite == {"m": 2}
    zeros = MSE()
    zeros.observe("z", np.zeros(10, np.float32))
    assert zeros.compute() == {"z": (0.0, 0.0)}


def test_registry_and_errors():
    assert sorted(CALIBRATORS) == ["entropy", "minmax", "mse", "percentile"]
    assert isinstance(make_calibrator("Percentile", percentile=99.9), Percentile)
    with pytest.raises(BurnedgeError, match="available: entropy, minmax, mse, percentile"):
        make_calibrator("kl")
    with pytest.raises(BurnedgeError, match="percentile"):
        make_calibrator("percentile", centile=3)
    with pytest.raises(BurnedgeError):
        Percentile(bins=1000)
    with pytest.raises(TypeError):
        MinMax().observe("i", np.arange(4))


# ---- calibration runs over a graph


class _Recorder(MinMax):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, tuple[int, ...]]] = []

    def _observe(self, name: str, x: np.ndarray) -> None:
        self.seen.append((name, x.shape))


def _branchy() -> burnedge.Model:
    """x -> MatMul -> Add -> Relu -> y, plus ReduceSum(Sigmoid(x)) * y -> out and an int64 Shape(y) output."""
    model = mlp(batch=2)
    g = model.graph
    g.node.extend(
        [
            helper.make_node("Sigmoid", ["x"], ["sx"], name="sigmoid"),
            helper.make_node("ReduceSum", ["sx", "axes"], ["ssum"], name="rsum", keepdims=1),
            helper.make_node("Mul", ["ssum", "y"], ["out"], name="mul"),
            helper.make_node("Shape", ["out"], ["shape"], name="shape"),
        ]
    )
    g.initializer.append(numpy_helper.from_array(np.array([1], np.int64), "axes"))
    g.output.extend(
        [
            helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
        ]
    )
    return burnedge.load(model)


def test_collect_sees_every_float_tensor():
    model = _branchy()
    g = model.graph
    rng = np.random.default_rng(5)
    batches = [{"x": rng.standard_normal((2, 4)).astype(np.float32)} for _ in range(3)]
    rec = collect(model, batches, _Recorder(), progress=False)
    floats = [n for n in g.inputs if g.values[n].dtype.kind == "f"]
    floats += [o for node in g.nodes for o in node.outputs if o and g.values[o].dtype.kind == "f"]
    assert {"x", "h", "z", "y", "sx", "ssum", "out"} == set(floats) and "shape" not in floats
    assert list(rec.counts) == floats
    assert [n for n, _ in rec.seen] == floats * 3
    names = layers(model)
    assert names["x"] == ("x", "input") and names["out"] == ("mul", "Mul") and set(floats) <= set(names)
    sess = burnedge.Session(model)
    ys = [sess.run(b)["y"] for b in batches]
    assert rec.compute()["y"] == (float(min(y.min() for y in ys)), float(max(y.max() for y in ys)))


def test_collect_rejects_bad_feeds_naming_input_and_batch():
    model = burnedge.load(mlp())
    good = {"x": np.zeros((1, 4), np.float32)}
    cases = [
        ({}, "missing input 'x'"),
        ({"x": np.zeros((1, 5), np.float32)}, "expected shape"),
        ({"x": np.zeros((1, 4), np.float64)}, "expected dtype float32"),
        ({"x": good["x"], "bogus": good["x"]}, "unknown input"),
    ]
    for bad, message in cases:
        with pytest.raises(InputError, match=message) as info:
            collect(model, [good, bad], MinMax(), progress=False)
        assert "calibration batch 1" in str(info.value)
    with pytest.raises(InputError, match="empty"):
        collect(model, [], MinMax(), progress=False)
    with pytest.raises(InputError, match="iterable"):
        collect(model, good, MinMax(), progress=False)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("rich_available", [True, False])
def test_collect_progress_on_a_terminal(monkeypatch, rich_available):
    import sys

    if not rich_available:
        monkeypatch.setitem(sys.modules, "rich.progress", None)
    out = _Tty()
    monkeypatch.setattr(sys, "stdout", out)
    model = burnedge.load(mlp())
    batches = (({"x": np.full((1, 4), i, np.float32)}) for i in range(3))  # a generator: no length
    ranges = collect(model, batches, MinMax()).compute()
    assert ranges["x"] == (0.0, 2.0)
    if not rich_available:
        assert "calibrating: batch 3" in out.getvalue()
