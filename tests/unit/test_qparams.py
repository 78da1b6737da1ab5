"""The int8 scheme: scales and zero points, fixed-point multipliers and the one requantization rounding rule."""

from __future__ import annotations

import json

import numpy as np
import pytest

from burnedge.quantize.qparams import (
    MIN_SCALE,
    QParams,
    activation_qparams,
    dequantize,
    quantize,
    quantize_bias,
    quantize_multiplier,
    requant_multiplier,
    requantize,
    weight_qparams,
)


def _requantize_py(acc: int, m: int, shift: int, zp: int, qmin: int = -128, qmax: int = 127) -> int:
    """The rule with unbounded Python integers: clamp(zp + floor(acc * m / 2^s + 1/2)), s = 31 - shift."""
    v = acc * m
    s = 31 - shift
    t = (v + (1 << (s - 1))) >> s if s >= 1 else v << -s
    return max(qmin, min(qmax, zp + t))


# ---- quantize_multiplier


def test_multiplier_round_trips_over_many_magnitudes():
    rng = np.random.default_rng(0)
    reals = np.concatenate([np.logspace(-40, 30, 701), np.exp(rng.uniform(-80, 60, 5000)), [1.0, 0.5, 2.0, 1e-30]])
    m, shift = quantize_multiplier(reals)
    assert m.dtype == np.int32 and shift.dtype == np.int32
    assert np.all(m >= 2**30) and np.all(m.astype(np.int64) < 2**31)
    back = m.astype(np.float64) * np.exp2(shift.astype(np.float64) - 31)  # exact: a 31-bit integer times 2^k
    assert np.all(np.abs(back - reals) <= reals * 2.0**-31)
    for r in (3e-12, 0.25, 0.7, 1.0, 17.0, 123456.789):  # scalars give Python ints, the same as the array path
        ms, ss = quantize_multiplier(r)
        assert isinstance(ms, int) and isinstance(ss, int)
        assert abs(ms * 2.0 ** (ss - 31) - r) <= r * 2.0**-31


def test_multiplier_edge_cases():
    assert quantize_multiplier(0.0) == (0, 0)
    assert quantize_multiplier(0.5) == (2**30, 0)
    assert quantize_multiplier(1.0) == (2**30, 1)
    assert quantize_multiplier(1 - 2.0**-40) == (2**30, 1)  # the mantissa rounds up to 2^31: carried
    for bad in (-1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError):
            quantize_multiplier(bad)


def test_requant_multiplier_uses_float32_scales():
    m, shift = requant_multiplier(np.float32(0.02), np.array([0.001, 0.003], np.float32), np.float32(0.05))
    real = np.float64(np.float32(0.02)) * np.array([0.001, 0.003], np.float32).astype(np.float64)
    real /= np.float64(np.float32(0.05))
    assert np.allclose(m * np.exp2(shift - 31.0), real, rtol=2.0**-31, atol=0)


# ---- requantize


def test_requantize_matches_integer_reference_exactly():
    rng = np.random.default_rng(1)
    n = 20000
    acc = rng.integers(-(2**31), 2**31, n, dtype=np.int64)
    acc[::3] = rng.integers(-4000, 4000, acc[::3].size)
    acc[:6] = [-(2**31), 2**31 - 1, 0, 1, -1, -(2**31) + 1]
    reals = np.exp(rng.uniform(np.log(1e-14), np.log(1e12), n))  # shifts from -46 to 40: both branches of s
    m, shift = quantize_multiplier(reals)
    for zp in (-128, -3, 0, 77, 127):
        got = requantize(acc, m, shift, zp)
        want = [_requantize_py(int(a), int(b), int(c), zp) for a, b, c in zip(acc, m, shift)]
        assert got.dtype == np.int8
        assert got.tolist() == want


def test_requantize_int16_range_and_raw_multipliers():
    rng = np.random.default_rng(2)
    acc = rng.integers(-(2**31), 2**31, 5000).astype(np.int32)
    m = rng.integers(0, 2**31, 5000)  # any multiplier in [0, 2^31), normalised or not
    shift = rng.integers(-70, 70, 5000)
    got = requantize(acc, m, shift, 5, -(2**15), 2**15 - 1)
    assert got.dtype == np.int16
    want = [_requantize_py(int(a), int(b), int(c), 5, -(2**15), 2**15 - 1) for a, b, c in zip(acc, m, shift)]
    assert got.tolist() == want


def test_requantize_within_one_step_of_float():
    rng = np.random.default_rng(3)
    acc = rng.integers(-(2**20), 2**20, 10000).astype(np.int32)
    for real in (1e-5, 3.3e-4, 0.0123, 0.4999, 0.9):
        m, shift = quantize_multiplier(real)
        got = requantize(acc, m, shift, -7, -(2**15), 2**15 - 1).astype(np.int64)
        ref = np.clip(np.rint(acc * real) - 7, -(2**15), 2**15 - 1)
        assert np.max(np.abs(got - ref)) <= 1


def test_requantize_rounds_half_up_once():
    m, shift = quantize_multiplier(0.5)
    got = requantize(np.array([1, -1, 3, -3, 5, -5], np.int32), m, shift, 0)
    assert got.tolist() == [1, 0, 2, -1, 3, -2]
    # one rounding, not two: 1 * 0.3 = 0.6 * 2^-1 would round to 1 first, then 0.5 -> 1; the exact 0.3 gives 0
    m, shift = quantize_multiplier(0.3)
    assert requantize(np.array([1, 5], np.int32), m, shift, 0).tolist() == [0, 2]


def test_requantize_per_channel_along_axis():
    rng = np.random.default_rng(4)
    acc = rng.integers(-50000, 50000, (2, 3, 4, 4)).astype(np.int32)
    reals = np.array([0.001, 0.01, 0.0004])
    m, shift = quantize_multiplier(reals)
    got = requantize(acc, m, shift, 3, axis=1)
    for c in range(3):
        assert np.array_equal(got[:, c], requantize(acc[:, c], int(m[c]), int(shift[c]), 3))


def test_requantize_rejects_bad_input():
    with pytest.raises(ValueError, match="overflow int32"):
        requantize(np.array([2**31], np.int64), 2**30, 0, 0)
    with pytest.raises(TypeError):
        requantize(np.array([1.5]), 2**30, 0, 0)
    with pytest.raises(ValueError):
        requantize(np.array([1], np.int32), 2**31, 0, 0)


# ---- activations, weights, bias


def test_activation_qparams_asymmetric_and_zero_exact():
    qp = activation_qparams(-1.0, 3.0)
    assert qp.dtype == np.int8 and qp.axis is None
    assert np.isclose(float(qp.scale), 4.0 / 255)
    assert quantize(np.float32(0.0), qp) == qp.zero_point
    assert dequantize(np.int8(qp.zero_point), qp) == 0.0
    x = np.linspace(-1, 3, 1001, dtype=np.float32)
    assert np.max(np.abs(dequantize(quantize(x, qp), qp) - x)) <= float(qp.scale) * 0.5001
    positive = activation_qparams(2.0, 5.0)  # widened to [0, 5]
    assert positive.zero_point == -128 and np.isclose(float(positive.scale), 5.0 / 255)
    negative = activation_qparams(-6.0, -1.0)  # widened to [-6, 0]
    assert negative.zero_point == 127


def test_activation_qparams_degenerate_ranges():
    zero = activation_qparams(0.0, 0.0)
    assert float(zero.scale) == 1.0 and zero.zero_point == 0
    tiny = activation_qparams(0.0, 1e-44)
    assert float(tiny.scale) == np.float32(MIN_SCALE)
    for lo, hi in ((float("-inf"), 1.0), (0.0, float("nan")), (2.0, 1.0)):
        with pytest.raises(ValueError):
            activation_qparams(lo, hi)


def test_weights_symmetric_per_output_channel():
    rng = np.random.default_rng(5)
    w = rng.standard_normal((6, 3, 3, 3)).astype(np.float32) * np.arange(1, 7, dtype=np.float32)[:, None, None, None]
    w[4] = 0.0
    qp = weight_qparams(w)
    assert qp.axis == 0 and qp.zero_point == 0 and (qp.qmin, qp.qmax) == (-127, 127) and qp.scale.shape == (6,)
    q = quantize(w, qp)
    assert q.dtype == np.int8 and q.min() >= -127
    for c in range(6):
        if c == 4:
            assert float(qp.scale[c]) == 1.0 and not q[c].any()
            continue
        assert np.abs(q[c]).max() == 127  # each channel's largest weight uses the full range
        assert np.isclose(qp.scale[c], np.abs(w[c]).max() / 127)
    err = np.abs(dequantize(q, qp) - w)
    assert np.all(err <= qp.scale[:, None, None, None] * 0.5001)
    mm = weight_qparams(rng.standard_normal((8, 5)).astype(np.float32), axis=1)  # MatMul [K, N]: channels on axis 1
    assert mm.axis == 1 and mm.scale.shape == (5,)


def test_bias_int32_with_product_scale():
    rng = np.random.default_rng(6)
    w = rng.standard_normal((4, 8)).astype(np.float32)
    wq = weight_qparams(w)
    b = np.array([0.5, -1.25, 3.0, 1e9], np.float32)
    qb, bq = quantize_bias(b, np.float32(0.02), wq)
    assert qb.dtype == np.int32 and bq.dtype == np.int32 and bq.zero_point == 0
    assert np.array_equal(bq.scale, (np.float32(0.02) * wq.scale.astype(np.float64)).astype(np.float32))
    assert np.allclose(qb[:3] * bq.scale[:3].astype(np.float64), b[:3], atol=bq.scale.max())
    assert qb[3] == 2**31 - 1  # saturates


def test_quantize_rounds_half_to_even_and_saturates():
    qp = QParams(np.float32(1.0), 0)
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 300.0, -300.0, np.nan], np.float32)
    assert quantize(x, qp).tolist() == [0, 2, 2, 0, -2, 127, -128, 0]


def test_qparams_validation_and_round_trip():
    qp = weight_qparams(np.eye(3, dtype=np.float32))
    again = QParams.from_dict(json.loads(json.dumps(qp.to_dict())))
    assert again == qp and hash(again) == hash(qp)
    with pytest.raises(ValueError):
        QParams(np.float32(0.0), 0)
    with pytest.raises(ValueError):
        QParams(np.float32(1.0), 200)
    with pytest.raises(ValueError):
        QParams(np.ones(3, np.float32), 0)  # per channel without an axis


def test_quantize_and_dequantize_match_the_onnx_op_references():
    from burnedge.ops.quantize_linear import dequantize_linear_13, quantize_linear_13

    rng = np.random.default_rng(7)
    x = (rng.standard_normal((3, 5, 4)) * 4).astype(np.float32)
    act = activation_qparams(-3.0, 9.0)
    zp = np.int8(act.zero_point)
    assert np.array_equal(quantize(x, act), quantize_linear_13(x, act.scale, zp))
    q = quantize(x, act)
    assert np.array_equal(dequantize(q, act), dequantize_linear_13(q, act.scale, zp))
    w = weight_qparams(x, axis=1)
    zeros = np.zeros(5, np.int8)
    assert np.array_equal(quantize(x, w), quantize_linear_13(x, w.scale, zeros, axis=1))
    qw = quantize(x, w)
    assert np.array_equal(dequantize(qw, w), dequantize_linear_13(qw, w.scale, zeros, axis=1))
