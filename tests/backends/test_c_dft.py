"""C backend vs numpy.fft (in double) on DFT (opset 20, axis and dft_length constant): real and complex signals,
odd lengths, cut and zero-padded transforms, onesided, inverse and irfft, an inner axis, 2 threads."""

from __future__ import annotations

import numpy as np
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
