"""Real pictures for the vision models: scikit-image's `data` images, prepared as each model's own package does.

scikit-image ships photographs (astronaut, coffee, chelsea, rocket, camera ...) and two scanned text pages (`page`,
`text`). Document models get pages composed from those: text blocks cut from the scans and a photograph as figure,
laid out on white paper (deterministic per seed), since two scans are too few to calibrate on and hold out from.
Resizing is Pillow's bilinear (the packages use OpenCV or Pillow; Pillow is what scikit-image installs).
"""

from __future__ import annotations

from functools import cache

import numpy as np
from PIL import Image

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)
PHOTOS = ("astronaut", "coffee", "chelsea", "rocket", "camera", "immunohistochemistry", "coins", "clock")


@cache
def picture(name: str) -> np.ndarray:
    """scikit-image's picture `name` as HxWx3 uint8 RGB (grey pictures repeated over the channels)."""
    from skimage import data

    img = np.asarray(getattr(data, name)())
    if img.ndim == 2:
        img = np.stack([img] * 3, axis=-1)
    return np.ascontiguousarray(img[..., :3].astype(np.uint8))


def resize(img: np.ndarray, width: int, height: int) -> np.ndarray:
    return np.asarray(Image.fromarray(img).resize((width, height), Image.BILINEAR))


def document(seed: int, height: int = 800, width: int = 608) -> np.ndarray:
    """A page (HxWx3 uint8): a title, paragraphs of scanned text and one photograph, placed by `seed`."""
    rng = np.random.default_rng(seed)
    page = np.full((height, width, 3), 255, np.uint8)
    scans = [picture("page"), _ink(picture("text"))]
    y = int(rng.integers(30, 60))
    title = scans[seed % 2][: 40 + seed % 20]
    page[y : y + title.shape[0], 40 : 40 + min(title.shape[1], width - 80)] = title[:, : width - 80]
    y += title.shape[0] + 30
    figure_at = int(rng.integers(1, 3))
    for block in range(4):
        if y >= height - 80:
            break
        if block == figure_at:
            photo = picture(PHOTOS[seed % len(PHOTOS)])
            w = int(rng.integers(width // 3, width - 120))
            h = min(int(w * photo.shape[0] / photo.shape[1]), height - y - 40)
            x = int(rng.integers(40, width - w - 40))
            page[y : y + h, x : x + w] = resize(photo, w, h)
            y += h + 30
            continue
        scan = scans[int(rng.integers(0, 2))]
        r0 = int(rng.integers(0, scan.shape[0] // 2))
        rows = min(int(rng.integers(60, 140)), scan.shape[0] - r0, height - y - 40)
        cut = scan[r0 : r0 + rows]
        w = width - 80
        h = max(8, int(round(cut.shape[0] * w / cut.shape[1])))
        h = min(h, height - y - 40)
        page[y : y + h, 40 : 40 + w] = resize(cut, w, h)
        y += h + int(rng.integers(20, 40))
    return page


def _ink(img: np.ndarray) -> np.ndarray:
    """`text` is dark ink on a grey board: stretched to black on white so it sits on paper."""
    grey = img.astype(np.float32)
    lo, hi = np.percentile(grey, 2), np.percentile(grey, 98)
    return (np.clip((grey - lo) / max(hi - lo, 1.0), 0, 1) * 255).astype(np.uint8)


@cache
def page_lines() -> list[tuple[int, int]]:
    """The rows of each text line of the scan `page`: bands between the minima of its ink profile (dark rows)."""
    ink = np.convolve((picture("page")[..., 0] < 110).mean(axis=1), np.ones(5) / 5, mode="same")
    minima = [i for i in range(6, len(ink) - 6) if ink[i] == ink[i - 6 : i + 7].min()]
    minima = [m for k, m in enumerate(minima) if k == 0 or m - minima[k - 1] > 3]
    return [(a, b) for a, b in zip(minima[:-1], minima[1:]) if b - a >= 10 and ink[a:b].max() > 0.25]  # not shade


def text_line(seed: int, width: int, height: int) -> np.ndarray:
    """One text line of the scan `page` (a stretch of it chosen by `seed`), HxWx3 uint8 of `width` x `height`.
    Calibration seeds (< 100) take the upper lines, held-out seeds the lower ones: no text is in both."""
    rng = np.random.default_rng(seed)
    lines = page_lines()
    half = len(lines) // 2 + 1
    top, bottom = lines[seed % half] if seed < 100 else lines[half + seed % (len(lines) - half)]
    scan = picture("page")
    cols = min(scan.shape[1], int((bottom - top) * width / height * rng.uniform(0.9, 1.2)))
    c0 = int(rng.integers(0, scan.shape[1] - cols + 1))
    return resize(scan[top:bottom, c0 : c0 + cols], width, height)


def chw(img: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(img.astype(np.float32).transpose(2, 0, 1)[None])


def imagenet(img: np.ndarray) -> np.ndarray:
    """x/255, ImageNet mean and std, [1,3,H,W] (the PaddleOCR and PicoDet preprocessing)."""
    return chw((img.astype(np.float32) / 255.0 - IMAGENET_MEAN) / IMAGENET_STD)


def letterbox(img: np.ndarray, size: int, fill: int, centred: bool) -> np.ndarray:
    """The longer side scaled to `size`, the rest padded with `fill`: centred (OriNet) or at the top left (YOLO)."""
    h, w = img.shape[:2]
    r = size / max(h, w)
    nw, nh = max(1, round(w * r)), max(1, round(h * r))
    out = np.full((size, size, 3), fill, np.uint8)
    y, x = ((size - nh) // 2, (size - nw) // 2) if centred else (0, 0)
    out[y : y + nh, x : x + nw] = resize(img, nw, nh)
    return out
