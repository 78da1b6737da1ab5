"""Signal-processing ops: DFT, STFT, the Hann / Hamming / Blackman windows and MelWeightMatrix.

DFT opsets 17 (axis attribute) and 20 (axis input); STFT, HannWindow, HammingWindow, BlackmanWindow and
MelWeightMatrix opset 17. Complex values are a trailing dimension of 2 (real, imaginary); a real signal has a
trailing dimension of 1. Transforms run ``numpy.fft`` in the input's precision (float64 or float32) and return the
input dtype.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from . import register
from ._common import norm_axis


def _scalar(a, default=None):
    if a is None or np.asarray(a).size == 0:
        return default
    return np.asarray(a).reshape(-1)[0].item()


def _as_complex(x):
    """A (..., 1) real or (..., 2) complex tensor as a real / complex array without the trailing dimension.

    float32 stays single precision (numpy >= 2 transforms it natively, as the ONNX test data were made).
    """
    real = np.float64 if x.dtype == np.float64 else np.float32
    if x.shape[-1] == 1:
        return x[..., 0].astype(real)
    if x.shape[-1] == 2:
        z = np.empty(x.shape[:-1], np.complex128 if real is np.float64 else np.complex64)
        z.real, z.imag = x[..., 0], x[..., 1]
        return z
    raise ValueError(f"the last dimension must be 1 (real) or 2 (complex), not {x.shape[-1]}")


def _pack(z, dtype):
    return np.stack([z.real, z.imag], axis=-1).astype(dtype)


def _dft(x, dft_length, axis, inverse, onesided):
    axis = norm_axis(int(axis), x.ndim)
    if axis == x.ndim - 1:
        raise ValueError("the DFT axis cannot be the last (complex) dimension")
    n = _scalar(dft_length)
    if n is None:
        n = 2 * (x.shape[axis] - 1) if inverse and onesided else x.shape[axis]
    n = int(n)
    z = _as_complex(x)
    if inverse and onesided:
        return np.fft.irfft(z, n=n, axis=axis)[..., None].astype(x.dtype)
    if inverse:
        return _pack(np.fft.ifft(z, n=n, axis=axis), x.dtype)
    out = np.fft.fft(z, n=n, axis=axis)
    if onesided:
        out = np.take(out, np.arange(n // 2 + 1), axis=axis)
    return _pack(out, x.dtype)


@register("DFT", since=17, static=(1,))
def dft_17(x, dft_length=None, *, axis=1, inverse=0, onesided=0):
    """Opset 17: the axis is an attribute (default 1)."""
    return _dft(x, dft_length, axis, inverse, onesided)


@register("DFT", since=20, static=(1, 2))
def dft_20(x, dft_length=None, axis=None, *, inverse=0, onesided=0):
    """Opset 20: the axis is an optional scalar input (default -2, the last signal dimension)."""
    return _dft(x, dft_length, _scalar(axis, -2), inverse, onesided)


@register("STFT", since=17, static=(1, 3))
def stft(signal, frame_step, window=None, frame_length=None, *, onesided=1):
    """Opset 17: [batch, frames, bins, 2] spectra of windowed frames; bins = frame_length // 2 + 1 if onesided."""
    step = int(_scalar(frame_step))
    n_fft = _scalar(frame_length)
    if n_fft is None:
        n_fft = window.shape[0] if window is not None else signal.shape[-2]
    n_fft = int(n_fft)
    win_len = window.shape[0] if window is not None else n_fft
    z = _as_complex(signal)  # (batch, length)
    n_frames = 1 + (z.shape[-1] - n_fft) // step
    if z.shape[-1] < win_len:
        z = np.concatenate([z, np.zeros(z.shape[:-1] + (win_len - z.shape[-1],))], axis=-1)
    frames = np.lib.stride_tricks.sliding_window_view(z, win_len, axis=-1)[..., ::step, :][..., :n_frames, :]
    if window is not None:
        frames = frames * _as_complex(window[:, None]) if window.ndim == 1 else frames * _as_complex(window)
    out = np.fft.fft(frames, n=n_fft, axis=-1)
    if onesided:
        out = out[..., : n_fft // 2 + 1]
    return _pack(out, signal.dtype)


def _window(size, periodic, output_datatype, fn):
    n = int(_scalar(size))
    denom = n if periodic else n - 1
    k = np.arange(n, dtype=np.float64)
    with np.errstate(all="ignore"):
        w = fn(2 * np.pi * k / denom) if n > 1 or periodic else np.ones(n)
    return w.astype(dtypes.from_onnx(output_datatype))


@register("HannWindow", since=17, static=(0,))
def hann_window(size, *, output_datatype=1, periodic=1):
    """Opset 17: 0.5 - 0.5 cos(2 pi n / N)."""
    return _window(size, periodic, output_datatype, lambda t: 0.5 - 0.5 * np.cos(t))


@register("HammingWindow", since=17, static=(0,))
def hamming_window(size, *, output_datatype=1, periodic=1):
    """Opset 17: 25/46 - 21/46 cos(2 pi n / N)."""
    return _window(size, periodic, output_datatype, lambda t: 25 / 46 - 21 / 46 * np.cos(t))


@register("BlackmanWindow", since=17, static=(0,))
def blackman_window(size, *, output_datatype=1, periodic=1):
    """Opset 17: 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)."""
    return _window(size, periodic, output_datatype, lambda t: 0.42 - 0.5 * np.cos(t) + 0.08 * np.cos(2 * t))


@register("MelWeightMatrix", since=17, static=(0, 1))
def mel_weight_matrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz, *, output_datatype=1):
    """Opset 17: [dft_length // 2 + 1, num_mel_bins] triangular filters with peaks of 1 (onnxruntime's binning)."""
    n_mel, n_dft = int(_scalar(num_mel_bins)), int(_scalar(dft_length))
    rate = float(_scalar(sample_rate))
    lo, hi = float(_scalar(lower_edge_hertz)), float(_scalar(upper_edge_hertz))
    n_bins = n_dft // 2 + 1
    mel_lo, mel_hi = 2595 * np.log10(1 + lo / 700), 2595 * np.log10(1 + hi / 700)
    edges = np.arange(n_mel + 2) * ((mel_hi - mel_lo) / (n_mel + 2)) + mel_lo
    hz = 700 * (np.power(10, edges / 2595) - 1)
    with np.errstate(all="ignore"):
        fb = np.floor((n_dft + 1) * hz / rate) if rate else np.zeros_like(hz)
    fb = fb.astype(np.int64)
    left, center, right = fb[:-2][None, :], fb[1:-1][None, :], fb[2:][None, :]
    j = np.arange(n_bins)[:, None]
    rise_w = np.where(center > left, (j - left) / np.maximum(center - left, 1), 1.0)
    rising = (j >= left) & (j <= center)
    falling = (j >= center) & (j < right)
    fall_w = (right - j) / np.maximum(right - center, 1)
    out = np.where(falling, fall_w, np.where(rising, rise_w, 0.0))
    return out.astype(dtypes.from_onnx(output_datatype))
