"""Measures one real model: its float bundle (C backend, host) against onnxruntime, and its int8 bundle (default
options of `burnedge.export(..., quantize="int8")`) against float, on held-out real inputs.

- float: the largest over held-out inputs and outputs of max|burnedge - onnxruntime| / max|onnxruntime|.
- int8: per output, the cosine between the int8 bundle's and onnxruntime's float outputs over all held-out inputs;
  the model's figure is the lowest output's. An export that raises `QuantizationTargetError` (the quantizer
  refusing a result below its target) is a refusal, recorded with its message; any other exception (an
  unsupported op, an internal error) is a failure.
"""

from __future__ import annotations

import math
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import burnedge

from .catalog import Feeds, RealModel

REFUSAL = "QuantizationTargetError"  # what burnedge raises when int8 misses its target (nothing is written)


@dataclass
class Outcome:
    """What a model did: kind is "measured" (value: the float error or the int8 cosine), "refused" or "fail"."""

    kind: str
    value: float = math.nan
    worst: str = ""  # the output the value is for
    reason: str = ""
    bundle: Path | None = None


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300] if text else ''}".rstrip(": ")


def onnxruntime_outputs(path: Path, feeds: list[Feeds]) -> list[dict[str, np.ndarray]]:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return [dict(zip(names, sess.run(None, f))) for f in feeds]


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    want = np.asarray(want, np.float64)
    got = np.asarray(got, np.float64).reshape(want.shape)
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    err = float(np.max(np.abs(got - want))) if want.size else 0.0
    return err / scale if scale > 0 else err


def cosine(pairs: list[tuple[np.ndarray, np.ndarray]]) -> float:
    num = aa = bb = 0.0
    for a, b in pairs:
        a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
        num, aa, bb = num + a @ b, aa + a @ a, bb + b @ b
    if aa == 0 or bb == 0:
        return 1.0 if aa == bb else 0.0
    return num / math.sqrt(aa * bb)


def _run(bundle: Path, feeds: list[Feeds]) -> list[dict[str, np.ndarray]]:
    sess = burnedge.Session(bundle, threads=1)
    return [sess.run(f) for f in feeds]


def check_float(model: RealModel, folder: Path) -> Outcome:
    """Exports `model` in float on the C backend and compares it with onnxruntime on the held-out inputs."""
    path, held = model.path(), model.held_out()
    refs = onnxruntime_outputs(path, held)
    try:
        bundle = burnedge.export(path, folder / "float.bedge", input_shapes=model.input_shapes(), test_vectors=0)
        outs = _run(bundle, held)
    except Exception as exc:  # noqa: BLE001  a crash is an outcome to record, not to propagate
        return Outcome("fail", reason=one_line(exc) + _where(exc))
    errs = {(n, i): relative_error(o[n], r[n]) for i, (o, r) in enumerate(zip(outs, refs)) for n in r}
    (name, _), worst = max(errs.items(), key=lambda kv: kv[1])
    return Outcome("measured", worst, name, bundle=bundle)


def check_int8(model: RealModel, folder: Path, **options: Any) -> Outcome:
    """Quantizes `model` with the default options on its calibration inputs, measured (validation=) on held-out
    ones; the bundle's cosine to float on those held-out inputs."""
    path, held = model.path(), model.held_out()
    refs = onnxruntime_outputs(path, held)
    try:
        bundle = burnedge.export(
            path,
            folder / "int8.bedge",
            input_shapes=model.input_shapes(),
            test_vectors=0,
            quantize="int8",
            calibration=model.calibration(),
            validation=held,  # the target holds on these, or the export refuses
            **options,
        )
    except Exception as exc:  # noqa: BLE001  a refusal is an honest outcome; anything else is a failure
        return Outcome("refused" if is_refusal(exc) else "fail", reason=one_line(exc) + _where(exc))
    try:
        outs = _run(bundle, held)
    except Exception as exc:  # noqa: BLE001
        return Outcome("fail", reason="running the int8 bundle: " + one_line(exc) + _where(exc))
    cos = {n: cosine([(o[n], r[n]) for o, r in zip(outs, refs)]) for n in refs[0]}
    name = min(cos, key=cos.get)
    return Outcome("measured", cos[name], name, bundle=bundle)


def is_refusal(exc: BaseException) -> bool:
    """The quantizer declining to write a model below its accuracy target: a `QuantizationTargetError` (a
    `burnedge.BurnedgeError` subclass). Other errors, a plain BurnedgeError from inside the pipeline included, are
    failures."""
    return isinstance(exc, burnedge.BurnedgeError) and any(
        c.__name__ == REFUSAL for c in type(exc).__mro__ if issubclass(c, burnedge.BurnedgeError)
    )


def _where(exc: BaseException) -> str:
    """' (at file:line)' of the innermost burnedge frame, so a crash's reason points somewhere."""
    if isinstance(exc, burnedge.BurnedgeError):  # a user-facing error already says where
        return ""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/burnedge/" in f.filename]
    return f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
