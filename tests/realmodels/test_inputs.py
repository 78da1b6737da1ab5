"""The real-like inputs are what the models were trained on: each model, run by onnxruntime, recognises them.

These pin the input preparation (pictures.py, sounds.py, catalog.py) to the models' own judgement, so a broken
resize, channel order or normalisation shows up here and not as a mysteriously good or bad int8 cosine.
"""

from __future__ import annotations

import numpy as np
import pytest

from .catalog import HELD_OUT, MODELS
from .fetch import FetchError, offline
from .measure import onnxruntime_outputs


def _outputs(name: str, seed: int) -> dict[str, np.ndarray]:
    m = MODELS[name]
    try:
        path = m.path()
    except FetchError as exc:
        (pytest.skip if offline() else pytest.fail)(f"{name}: {exc}")
    return onnxruntime_outputs(path, [m.feeds(seed)])[0]


def test_orinet_sees_each_rotation_of_a_page() -> None:
    logits = _outputs("orinet", HELD_OUT)["logits"]  # the batch is the page turned by 0, 90, 180, 270 degrees
    assert logits.argmax(axis=1).tolist() == [0, 1, 2, 3], logits


def test_yolov8n_finds_the_astronaut() -> None:
    scores = _outputs("yolov8n_320", 0)["output0"][0, 4:]  # seed 0: astronaut; rows 4.. are class scores
    assert scores.max() > 0.5, scores.max()


def test_silero_hears_speech_and_pauses() -> None:
    probs = _outputs("silero_vad_v6_sequence", HELD_OUT)["speech_probs"].ravel()
    assert probs.max() > 0.9 and probs.min() < 0.1, probs.round(2)


def test_deepfilternet_tells_speech_from_silence() -> None:
    lsnr = _outputs("deepfilternet3_enc", 0)["lsnr"].ravel()  # its local SNR estimate, dB
    assert lsnr.max() - lsnr.min() > 20, lsnr.round(1)
