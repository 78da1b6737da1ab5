"""DFT (opsets 17 and 20), STFT and MelWeightMatrix (opset 17).

DFT runs on be_dft_f32 (kernels/signal.h): the axis and dft_length must be constants (bound when they are graph
inputs: they decide the output's shape); the twiddles of the n-point transform are computed here in double and
stored with the weights. Output bins follow the reference: all n, n/2+1 when onesided, and a real signal of n
samples for an inverse onesided transform (irfft, n = 2 * (bins - 1) by default).

STFT: frame_step and frame_length constant (bound), the window may arrive at run time. Each frame is the window's
length of signal from frame * step (zeros past the end), times the window, transformed over frame_length points
(cut or zero-padded) with the same twiddle table, as a direct sum in double; n/2+1 bins when onesided."""

from __future__ import annotations

import numpy as np

from ....ir import Node
from . import Ctx, ctype, lower
from .movement import ints
from .reduce import attr, norm_axis, split


def _const_scalar(ctx: Ctx, node: Node, k: int, what: str) -> int | None:
    name = node.inputs[k] if len(node.inputs) > k else ""
    if not name:
        return None
    value = ctx.const(name)
    ctx.require(value is not None, f"{what} must be a constant (bind it): it decides the output's shape")
    return int(np.asarray(value).reshape(-1)[0]) if np.asarray(value).size else None


@lower("DFT")
def dft(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    ctx.require(ctx.dtype(x) == np.float32, f"no C DFT on {ctx.dtype(x)} (float32 only)")
    shape = ctx.shape(x)
    ctx.require(len(shape) >= 2 and shape[-1] in (1, 2), f"input shape {list(shape)}: the last dim must be 1 or 2")
    if node.op.since >= 20:
        axis = _const_scalar(ctx, node, 2, "the axis")
        axis = -2 if axis is None else axis
    else:
        axis = int(attr(node, "axis", 1))
    axis = norm_axis(ctx, axis, len(shape))
    ctx.require(axis != len(shape) - 1, "the axis cannot be the last (complex) dimension")
    inverse, onesided = int(attr(node, "inverse", 0)), int(attr(node, "onesided", 0))
    irfft = bool(inverse and onesided)
    n = _const_scalar(ctx, node, 1, "dft_length")
    if n is None:
        n = 2 * (shape[axis] - 1) if irfft else shape[axis]
    ctx.require(n > 0, f"dft_length is {n}, expected a positive length")
    m = n if irfft or not onesided else n // 2 + 1
    outer, length, inner = split(shape[:-1], axis)
    ctx.require(ctx.shape(y)[axis] == m, f"the output has {ctx.shape(y)[axis]} bins along the axis, expected {m}")
    if ctx.size(y) == 0:
        return "/* empty */"
    cs = _twiddles(ctx, n)
    args = f"{outer}, {length}, {inner}, {shape[-1]}, {n}, {m}, {inverse}, {int(irfft)}, {cs}"
    return f"be_dft_f32({ctx.tensor(x)}, {ctx.tensor(y)}, {args}, threads);"


def _twiddles(ctx: Ctx, n: int) -> str:
    t = 2 * np.pi * np.arange(n, dtype=np.float64) / n
    return ctx.pack(f"dft:twiddles:{n}", np.stack([np.cos(t), np.sin(t)], axis=-1).reshape(-1))


@lower("STFT")
def stft(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    ctx.require(ctx.dtype(x) == np.float32, f"no C STFT on {ctx.dtype(x)} (float32 only)")
    batch, length, c = ctx.shape(x)
    ctx.require(c in (1, 2), f"the signal's last dim is {c}, expected 1 (real) or 2 (complex)")
    step = ctx.const(node.inputs[1])
    ctx.require(step is not None, "frame_step must be a constant (bind it): it decides the output's shape")
    step = ints(step)[0]
    window = node.inputs[2] if len(node.inputs) > 2 else ""
    n = _const_scalar(ctx, node, 3, "frame_length")
    if n is None:
        n = ctx.shape(window)[0] if window else length
    win = ctx.shape(window)[0] if window else n
    frames = 1 + (length - n) // step
    bins = n // 2 + 1 if int(attr(node, "onesided", 1)) else n
    ctx.require(list(ctx.shape(y)) == [batch, frames, bins, 2], f"the output is {list(ctx.shape(y))}, expected "
                f"{[batch, frames, bins, 2]}")  # fmt: skip
    if ctx.size(y) == 0:
        return "/* empty */"
    w = f"(double){ctx.tensor(window)}[j]" if window else "1.0"
    return "\n".join([
        "{",
        f"  const float *xp = {ctx.tensor(x)};",
        f"  const double *cs = {_twiddles(ctx, n)};",
        f"  float *yp = {ctx.tensor(y)};",
        f"  for (long b = 0; b < {batch}; b++)",
        f"    for (long f = 0; f < {frames}; f++)",
        f"      for (long k = 0; k < {bins}; k++) {{",
        "        double re = 0.0, im = 0.0;",
        f"        for (long j = 0; j < {min(win, n)}; j++) {{",
        f"          const long t = f * {step} + j;",
        f"          if (t >= {length}) break;",
        f"          const double w = {w}, xr = w * xp[(b * {length} + t) * {c}];",
        f"          const double xi = {f'w * xp[(b * {length} + t) * 2 + 1]' if c == 2 else '0.0'};",
        f"          const long a = (j * k) % {n};",
        "          re += xr * cs[2 * a] + xi * cs[2 * a + 1];",
        "          im += xi * cs[2 * a] - xr * cs[2 * a + 1];",
        "        }",
        f"        float *o = yp + ((b * {frames} + f) * {bins} + k) * 2;",
        "        o[0] = (float)re;",
        "        o[1] = (float)im;",
        "      }",
        "}",
    ])  # fmt: skip


@lower("MelWeightMatrix")
def mel_weight_matrix(ctx: Ctx, node: Node) -> str:
    """[dft_length // 2 + 1, num_mel_bins] triangular filters as the reference bins them: num_mel_bins and
    dft_length constant (they decide the shape), the sample rate and the band edges at run time; the filter edges
    are computed in double, their FFT bins floor((dft_length + 1) * hz / rate) (0 at a zero rate)."""
    n_mel, n_dft = _const_scalar(ctx, node, 0, "num_mel_bins"), _const_scalar(ctx, node, 1, "dft_length")
    ctx.require(n_mel is not None and n_dft is not None, "num_mel_bins and dft_length must be given")
    y, bins = node.outputs[0], n_dft // 2 + 1
    ctx.require(list(ctx.shape(y)) == [bins, n_mel], f"the output is {list(ctx.shape(y))}, expected {[bins, n_mel]}")
    if bins * n_mel == 0:
        return "/* empty */"
    ct = ctype(ctx.dtype(y))
    rate, lo, hi = (f"(double){ctx.tensor(name)}[0]" for name in node.inputs[2:5])
    return "\n".join([
        "{",
        f"  const double rate = {rate}, lo = 2595.0 * log10(1.0 + {lo} / 700.0);",
        f"  const double step = (2595.0 * log10(1.0 + {hi} / 700.0) - lo) / {n_mel + 2};",
        f"  {ct} *yp = {ctx.tensor(y)};",
        f"  int64_t fb[{n_mel + 2}];",
        f"  for (long i = 0; i < {n_mel + 2}; i++) {{",
        "    const double hz = 700.0 * (pow(10.0, ((double)i * step + lo) / 2595.0) - 1.0);",
        f"    fb[i] = rate != 0.0 ? (int64_t)floor({n_dft + 1}.0 * hz / rate) : 0;",
        "  }",
        f"  for (long j = 0; j < {bins}; j++)",
        f"    for (long i = 0; i < {n_mel}; i++) {{",
        "      const int64_t l = fb[i], c = fb[i + 1], r = fb[i + 2];",
        "      double v = 0.0;",
        "      if (j >= c && j < r) v = (double)(r - j) / (double)(r - c > 1 ? r - c : 1);",
        "      else if (j >= l && j <= c) v = c > l ? (double)(j - l) / (double)(c - l > 1 ? c - l : 1) : 1.0;",
        f"      yp[j * {n_mel} + i] = ({ct})v;",
        "    }",
        "}",
    ])  # fmt: skip
