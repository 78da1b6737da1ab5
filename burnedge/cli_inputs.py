"""What the CLI reads from its arguments beside the model: --bind values, .npy feeds fitted to a model's inputs, and
the folders of files it writes. Parsing only: a malformed value is a one-line UsageError."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .errors import BurnedgeError
from .files import require_regular

__all__ = [
    "UsageError",
    "add_bind",
    "binds",
    "fit_feeds",
    "fmt_shape",
    "load_model",
    "make_folder",
    "no_bind_for_bundle",
    "parent_folder",
    "si",
    "writable_folder",
]

BIND_HELP = "fix an input to a constant: a .npy file or a number or comma list (dtype: the input's); repeatable"


class UsageError(BurnedgeError):
    """A bad command line value (a malformed --input, --input-shape or --bind)."""


def add_bind(s: argparse.ArgumentParser) -> None:
    s.add_argument("--bind", action="append", default=[], metavar="NAME=FILE.npy|VALUE", help=BIND_HELP)


def _number(text: str) -> int | float:
    try:
        return int(text, 0)
    except ValueError:
        return float(text)  # also nan, inf


def binds(items: Sequence[str]) -> dict[str, np.ndarray]:
    """--bind NAME=FILE.npy | NAME=VALUE (a number: a 0-d array; a comma list: 1-d); the importer converts each to
    its input's dtype (losslessly) and declared shape."""
    out: dict[str, np.ndarray] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise UsageError(f"--bind {item!r}: expected NAME=FILE.npy or NAME=VALUE (e.g. sr=16000 or x=1,2,3)")
        if name in out:
            raise UsageError(f"--bind {name}: given twice")
        if value.lower().endswith(".npy"):
            try:
                out[name] = np.load(require_regular(value, UsageError, f"--bind {name} file"), allow_pickle=False)
            except (OSError, ValueError) as exc:
                raise UsageError(f"--bind {name}: cannot read {value!r} as a .npy array ({exc})") from None
            continue
        try:
            parts = [_number(p.strip()) for p in value.split(",")]
        except ValueError:
            raise UsageError(
                f"--bind {item!r}: {value!r} is neither a .npy file nor a number or comma list of numbers"
            ) from None
        out[name] = np.array(parts[0] if len(parts) == 1 and "," not in value else parts)
    return out


def no_bind_for_bundle(a: argparse.Namespace) -> None:
    if getattr(a, "bind", None):
        raise UsageError("--bind does not apply to a bundle: its inputs were fixed at export")


def fit_feeds(feeds: Mapping[str, np.ndarray], inputs: Sequence[Any]) -> dict[str, np.ndarray]:
    """Each feed converted to its input's dtype where nothing is lost, float to float (a float64 .npy of float32
    values) and integer to integer (values that fit); a lossy one is an InputError. Other kinds are left to the
    session's own check (an int8 bundle's float input also takes int8 arrays)."""
    from .feeds import lossless

    out = dict(feeds)
    for i in inputs:
        arr = out.get(i.name)
        if arr is None or arr.dtype == i.dtype:
            continue
        if (arr.dtype.kind, i.dtype.kind) == ("f", "f") or {arr.dtype.kind, i.dtype.kind} <= {"i", "u"}:
            out[i.name] = lossless(arr, i.dtype, f"input {i.name!r}")
    return out


def _dynamic_inputs(path: Path) -> set[str]:
    """The graph inputs of an .onnx file with a dimension that is not a fixed number (read without weights)."""
    import onnx

    try:
        proto = onnx.load(str(path), load_external_data=False)
    except Exception:  # noqa: BLE001 - the importer has already said what is wrong with the file
        return set()
    inits = {i.name for i in proto.graph.initializer}
    return {
        vi.name
        for vi in proto.graph.input
        if vi.name not in inits
        and any(not d.HasField("dim_value") or d.dim_value < 0 for d in vi.type.tensor_type.shape.dim)
    }


def load_model(a: argparse.Namespace, shapes: Mapping[str, tuple[int, ...]], feeds: Mapping[str, np.ndarray]):
    """`burnedge.load` of a.model with --input-shape and --bind (or --arch: a zoo checkpoint); an input with
    dynamic dimensions that the command line leaves open takes the shape of its .npy feed (so `run model.onnx
    --input x=x.npy` needs no --input-shape)."""
    from .cli_zoo import arch_model
    from .errors import NotStaticError
    from .importers import load

    zoo_model = arch_model(a, shapes)  # --arch: a zoo checkpoint
    if zoo_model is not None:
        return zoo_model
    bound = binds(getattr(a, "bind", []))
    try:
        return load(a.model, input_shapes=shapes, bind=bound)
    except NotStaticError:
        guessed = {n: feeds[n].shape for n in _dynamic_inputs(a.model) if n in feeds and n not in shapes}
        if not guessed:
            raise
        return load(a.model, input_shapes={**shapes, **guessed}, bind=bound)


def parent_folder(path: Path | None, option: str) -> None:
    """Makes the folder `path` is to be written into (--timeline, --report), or says in one line why it cannot."""
    if path is None:
        return
    if Path(path).is_dir():
        example = Path(path) / ("arena.svg" if option == "--timeline" else "report.html")
        raise UsageError(f"{option} {path}: that is a folder; give the file to write (a name such as {example})")
    make_folder(Path(path).parent, option, path)


def writable_folder(path: Path, option: str) -> None:
    """Says in one line when the folder `path` is to go into cannot be made: a file stands where a folder must be
    (the writer makes missing folders itself, after the work)."""
    for folder in Path(path).absolute().parents:
        if folder.exists():
            if not folder.is_dir():
                raise UsageError(f"{option} {path}: cannot make the folder {folder} (a file of that name exists)")
            return


def make_folder(folder: Path, option: str, given: Path | str | None = None) -> None:
    """Makes `folder` (and its parents) for `option`, or says in one line why it cannot."""
    if folder.is_dir():
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        why = "a file of that name exists" if isinstance(exc, FileExistsError) else exc.strerror or exc
        raise UsageError(f"{option} {given or folder}: cannot make the folder {folder} ({why})") from None


def fmt_shape(shape: Sequence[int | str]) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def si(n: float) -> str:
    """A count in SI units: 1234567 -> 1.235M."""
    for unit in ("", "K", "M", "G", "T"):
        if abs(n) < 1000:
            return f"{n:.4g}{unit}"
        n /= 1000
    return f"{n:.4g}P"
