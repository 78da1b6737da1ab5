"""Speech-like audio for the audio models, synthesised here (no pip package ships a speech clip), and the features
each model's own runtime computes from it.

The signal is a source-filter imitation of speech, deterministic per seed: words of 2-4 syllables separated by
pauses; each syllable a vowel (a glottal pulse train at a gliding pitch of 90-240 Hz through three formant
resonators) with a noise-burst consonant before it, a syllable envelope, and a quiet noise floor. What the models
see from it:

- Silero VAD (faster-whisper's runtime): 16 kHz frames of 512 samples, each with the previous frame's last 64
  samples in front (the first frame: zeros), all frames in one call with zero LSTM state.
- DeepFilterNet3 (libDF's features): 48 kHz, 960-point FFT, hop 480; `feat_erb` = 32 ERB-band log powers (dB) with
  an exponential mean removed, over 40; `feat_spec` = the first 96 complex bins over the square root of their
  running mean magnitude (real, imaginary as two channels).
"""

from __future__ import annotations

import numpy as np
from scipy.signal import lfilter

VOWELS = ((730, 1090, 2440), (270, 2290, 3010), (300, 870, 2240), (530, 1840, 2480), (570, 840, 2410))


def speech(seed: int, seconds: float, sr: int) -> np.ndarray:
    """`seconds` of speech-like float32 audio at `sr` Hz, peak about 0.5."""
    rng = np.random.default_rng(seed)
    n = int(seconds * sr)
    out = np.zeros(n, np.float64)
    t = int(rng.uniform(0.05, 0.25) * sr)
    while t < n:
        for _ in range(int(rng.integers(2, 5))):  # a word
            t = _syllable(out, t, sr, rng)
        t += int(rng.uniform(0.1, 0.5) * sr)  # a pause
    out /= max(np.max(np.abs(out)), 1e-9) * 2
    out += rng.normal(0, 0.003, n)  # a quiet room
    return out.astype(np.float32)


def _syllable(out: np.ndarray, t: int, sr: int, rng: np.random.Generator) -> int:
    if t >= len(out):
        return t
    cons = int(rng.uniform(0.02, 0.07) * sr)  # fricative / plosive noise
    burst = lfilter([1, -0.95], [1], rng.normal(0, 0.15, cons)) * np.hanning(cons)
    vow = int(rng.uniform(0.08, 0.25) * sr)
    f0 = rng.uniform(90, 240) * np.linspace(1.0, rng.uniform(0.8, 1.2), vow)
    phase = np.cumsum(f0 / sr)
    source = (np.diff(np.floor(phase), prepend=0) > 0).astype(np.float64)  # one pulse per period
    source = lfilter([1], [1, -0.97], source)  # glottal roll-off
    voiced = source
    for f in VOWELS[int(rng.integers(0, len(VOWELS)))]:
        r = np.exp(-np.pi * 80 / sr)
        voiced = lfilter([1 - r], [1, -2 * r * np.cos(2 * np.pi * f / sr), r * r], voiced)
    voiced *= np.sin(np.linspace(0, np.pi, vow)) ** 0.5 * rng.uniform(0.4, 1.0)
    seg = np.concatenate([burst * np.max(np.abs(voiced)), voiced])
    end = min(len(out), t + len(seg))
    out[t:end] += seg[: end - t]
    return end + int(rng.uniform(0.01, 0.05) * sr)


# -- Silero VAD ----------------------------------------------------------------------------------------------------
def vad_frames(seed: int, frames: int) -> np.ndarray:
    """[frames, 576] float32: 16 kHz audio cut as faster-whisper's SileroVADModel does (512 + 64 of context)."""
    audio = speech(seed, frames * 512 / 16000 + 0.01, 16000)[: frames * 512].reshape(frames, 512)
    context = np.roll(audio[:, -64:], 1, axis=0)
    context[0] = 0
    return np.ascontiguousarray(np.concatenate([context, audio], axis=1))


# -- DeepFilterNet3 ------------------------------------------------------------------------------------------------
SR, FFT, HOP, ERB_BANDS, DF_BINS = 48000, 960, 480, 32, 96
ALPHA = float(np.exp(-HOP / SR / 1.0))  # libDF's norm_alpha for tau = 1 s


def _erb_edges() -> np.ndarray:
    """Bin edges of 32 bands equally spaced on the ERB scale over 0..24 kHz, each at least 2 bins wide."""
    bins = FFT // 2 + 1
    erb = np.linspace(0, 21.4 * np.log10(1 + 0.00437 * SR / 2), ERB_BANDS + 1)
    hz = (10 ** (erb / 21.4) - 1) / 0.00437
    edges = np.round(hz / (SR / FFT)).astype(int)
    for i in range(1, len(edges)):
        edges[i] = max(edges[i], edges[i - 1] + 2)
    edges[-1] = bins
    return edges


def dfn_features(seed: int, frames: int) -> dict[str, np.ndarray]:
    """{feat_erb [1,1,S,32], feat_spec [1,2,S,96]} of `frames` (S) frames of speech-like audio with some noise."""
    audio = speech(seed, (frames + 2) * HOP / SR, SR).astype(np.float64)
    audio += np.random.default_rng(seed + 7).normal(0, 0.01, audio.shape)  # what an enhancer is for
    window = np.sin(0.5 * np.pi * np.sin(np.pi * (np.arange(FFT) + 0.5) / FFT) ** 2)  # Vorbis
    padded = np.concatenate([np.zeros(FFT - HOP), audio])
    spec = np.stack([np.fft.rfft(padded[i * HOP : i * HOP + FFT] * window) / FFT for i in range(frames)])
    edges = _erb_edges()
    power = np.stack([np.mean(np.abs(spec[:, a:b]) ** 2, axis=1) for a, b in zip(edges[:-1], edges[1:])], axis=1)
    db = 10 * np.log10(power + 1e-10)
    mean = np.linspace(-60, -90, ERB_BANDS)
    erb = np.empty_like(db)
    for i in range(frames):
        mean = db[i] * (1 - ALPHA) + mean * ALPHA
        erb[i] = (db[i] - mean) / 40
    df = spec[:, :DF_BINS]
    state = np.linspace(0.001, 0.0001, DF_BINS)
    unit = np.empty_like(df)
    for i in range(frames):
        state = np.abs(df[i]) * (1 - ALPHA) + state * ALPHA
        unit[i] = df[i] / np.sqrt(state)
    return {
        "feat_erb": erb[None, None].astype(np.float32),
        "feat_spec": np.stack([unit.real, unit.imag])[None].astype(np.float32),
    }
