"""C backend vs numpy.fft (in double) on DFT (opset 20, axis and dft_length constant) and STFT: real and complex
signals, odd lengths, cut and zero-padded transforms, onesided, inverse and irfft, an inner axis, a run-time window,
2 threads."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from .c_helpers import run_c

RNG = np.random.default_rng(23)


def _complex(x: np.ndarray) -> np.ndarray:
    return x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0].astype(np.complex128)


def _run(x: np.ndarray, axis: int, n: int | None, **attrs) -> np.ndarray:
    inits = [numpy_helper.from_array(np.array(axis, np.int64), "axis")]
    if n is not None:
        inits.append(numpy_helper.from_array(np.array(n, np.int64), "n"))
    node = helper.make_node("DFT", ["x", "n" if n is not None else "", "axis"], ["y"], **attrs)
    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)]
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    graph = helper.make_graph([node], "g", vi, out, initializer=inits)
    return run_c(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), {"x": x})


@pytest.mark.parametrize("channels", [1, 2])
@pytest.mark.parametrize("axis", [1, -2])
@pytest.mark.parametrize("n", [None, 5, 16])
@pytest.mark.parametrize("inverse,onesided", [(0, 0), (0, 1), (1, 0)])
def test_dft(channels, axis, n, inverse, onesided):
    x = RNG.standard_normal((2, 11, 7, channels)).astype(np.float32)
    z = _complex(x.astype(np.float64))
    ax = axis % x.ndim  # the same axis of z, which lacks only the trailing (real, imaginary) dimension
    full = (np.fft.ifft if inverse else np.fft.fft)(z, n=n, axis=ax)
    if onesided:
        full = np.take(full, np.arange((n or x.shape[ax]) // 2 + 1), axis=ax)
    want = np.stack([full.real, full.imag], -1)
    got = _run(x, axis, n, inverse=inverse, onesided=onesided)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n", [None, 9, 12])
def test_irfft(n):
    x = RNG.standard_normal((3, 6, 2)).astype(np.float32)
    want = np.fft.irfft(_complex(x.astype(np.float64)), n=n, axis=1)[..., None]
    got = _run(x, 1, n, inverse=1, onesided=1)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("channels", [1, 2])
@pytest.mark.parametrize("step,n,with_window,onesided", [(3, 8, True, 1), (5, 12, False, 0), (4, 9, True, 0)])
def test_stft(channels, step, n, with_window, onesided):
    x = RNG.standard_normal((2, 41, channels)).astype(np.float32)
    win = RNG.uniform(0.2, 1.0, n).astype(np.float32)
    inits = [numpy_helper.from_array(np.array(step, np.int64), "step"), numpy_helper.from_array(np.array(n), "n")]
    names = ["x", "step", "w" if with_window else "", "n"]
    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)]
    feeds = {"x": x}
    if with_window:  # the window arrives at run time
        vi.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, win.shape))
        feeds["w"] = win
    node = helper.make_node("STFT", names, ["y"], onesided=onesided)
    graph = helper.make_graph([node], "g", vi, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    got = run_c(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), feeds)
    z = _complex(x.astype(np.float64))
    frames = np.stack([z[:, f * step : f * step + n] for f in range(1 + (41 - n) // step)], 1)
    spec = np.fft.fft(frames * (win if with_window else 1.0), axis=-1)[..., : n // 2 + 1 if onesided else n]
    np.testing.assert_allclose(got, np.stack([spec.real, spec.imag], -1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("n_mel", "n_dft", "rate", "lo", "hi"), [(8, 16, 8192, 0.0, 4096.0), (12, 64, 16000, 80.0,
                         7600.0), (5, 9, 100, 10.0, 45.0), (4, 16, 1000, 0.0, 400.0)])  # fmt: skip
def test_mel_weight_matrix(n_mel, n_dft, rate, lo, hi):
    """MelWeightMatrix vs onnxruntime: num_mel_bins and dft_length constant, the rate and band edges fed at run
    time."""
    inits = [
        numpy_helper.from_array(np.array(n_mel, np.int64), "m"),
        numpy_helper.from_array(np.array(n_dft, np.int64), "d"),
    ]
    node = helper.make_node("MelWeightMatrix", ["m", "d", "rate", "lo", "hi"], ["y"])
    vi = [helper.make_tensor_value_info("rate", TensorProto.INT64, []),
          helper.make_tensor_value_info("lo", TensorProto.FLOAT, []),
          helper.make_tensor_value_info("hi", TensorProto.FLOAT, [])]  # fmt: skip
    graph = helper.make_graph(
        [node], "g", vi, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    feeds = {"rate": np.array(rate, np.int64), "lo": np.array(lo, np.float32), "hi": np.array(hi, np.float32)}
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(["y"], feeds)[0]
    got = run_c(proto, feeds)
    assert got.shape == want.shape == (n_dft // 2 + 1, n_mel)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
