"""The `burnedge` command line: parsing and printing only; the work is done by the library."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import cli_bundle, cli_inputs, cli_inspect, cli_ops, cli_targets, cli_trust, cli_zoo
from .bundle import looks_like
from .cli_inputs import UsageError, fmt_shape
from .errors import BurnedgeError
from .files import require_regular, write_atomic
from .version import __version__

__all__ = ["main"]


def _shapes(items: Sequence[str]) -> dict[str, tuple[int, ...]]:
    out = {}
    for item in items:
        name, sep, dims = item.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            out[name] = tuple(int(d) for d in dims.split(","))
        except ValueError:
            raise UsageError(f"--input-shape {item!r}: expected NAME=D0,D1,... (e.g. input=1,3,224,224)") from None
    return out


def _feeds(items: Sequence[str]) -> dict[str, np.ndarray]:
    out = {}
    for item in items:
        name, sep, file = item.partition("=")
        if not sep or not name or not file:
            raise UsageError(f"--input {item!r}: expected NAME=FILE.npy")
        try:
            out[name] = np.load(require_regular(file, UsageError, f"--input {name} file"), allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise UsageError(f"--input {name}: cannot read {file!r} as a .npy array ({exc})") from None
    return out


def _count(option: str, least: int = 1) -> Callable[[str], int]:
    """An argparse type: a whole number >= `least`; anything else is a one-line UsageError naming `option`."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            n = least - 1
        if n < least:
            raise UsageError(f"{option} {text!r}: expected a whole number >= {least}")
        return n

    return parse


# -- commands -----------------------------------------------------------------------------------------------------
def _save_npy(path: Path, arr: np.ndarray) -> None:
    """Writes atomically: a crash leaves either the old file or the new one, never half of one."""
    write_atomic(path, lambda f: np.save(f, arr, allow_pickle=False))


def cmd_run(a: argparse.Namespace) -> int:
    from .session import Session

    feeds = _feeds(a.input)
    if looks_like(a.model):
        if a.input_shape:
            raise UsageError("--input-shape does not apply to a bundle: its shapes were fixed at export")
        cli_inputs.no_bind_for_bundle(a)
        sess = Session(a.model, backend=a.backend, threads=a.threads, trust=cli_trust.trust_of(a))
    else:
        model = cli_inputs.load_model(a, _shapes(a.input_shape), feeds)
        sess = Session(model, backend=a.backend, threads=a.threads)
    outs = sess.run(cli_inputs.fit_feeds(feeds, sess.inputs))
    if a.output_dir:
        out_dir = Path(a.output_dir)
        cli_inputs.make_folder(out_dir, "--output-dir")
    for name, arr in outs.items():
        stats = ""
        if arr.size and arr.dtype.kind in "fiub":
            stats = f"  min {arr.min():.6g}  max {arr.max():.6g}  mean {arr.astype(np.float64).mean():.6g}"
        print(f"{name:24s} {str(arr.dtype):8s} {fmt_shape(arr.shape):18s}{stats}")
        if a.output_dir:
            safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
            _save_npy(out_dir / f"{safe}.npy", arr)
    if a.output_dir:
        print(f"wrote {len(outs)} output(s) to {a.output_dir}")
    return 0


def cmd_demo(a: argparse.Namespace) -> int:
    from .errors import UnsupportedOpError
    from .examples import DIGITS_MODEL, DIGITS_TEST
    from .exporter import export
    from .session import Session
    from .verifier import verify

    data = np.load(DIGITS_TEST)
    images, labels = data["images"].astype(np.float32), data["labels"]
    print(f"model      {DIGITS_MODEL.name}: MLP on scikit-learn's 8x8 handwritten digits, {len(labels)} held-out")
    if a.backend != "c":
        return _demo_run(Session(DIGITS_MODEL, backend=a.backend), a.backend, images, labels)
    with tempfile.TemporaryDirectory(prefix="burnedge-demo-") as tmp:
        try:
            path = export(DIGITS_MODEL, Path(tmp) / "digits_mlp.bedge", test_vectors=1)
        except UnsupportedOpError as exc:  # NOTE: only while the C backend lacks a kernel the model needs
            print(f"note       the C backend cannot run this model yet ({exc}); running on numpy instead")
            return _demo_run(Session(DIGITS_MODEL, backend="numpy"), "numpy", images, labels)
        check = max(verify(path), key=lambda c: c.relative)
        print(f"bundle     {path.name}: {path.stat().st_size:,} bytes, exported to a temporary folder")
        print(f"check      its test vector matches the numpy reference: relative error {check.relative:.2g}")
        return _demo_run(Session(path, backend="c"), "c (from the bundle)", images, labels)


def _demo_run(sess: Any, backend: str, images: np.ndarray, labels: np.ndarray) -> int:
    import time

    times, correct = [], 0
    for img, label in zip(images, labels):
        t0 = time.perf_counter()
        probs = sess.run({"image": img.reshape(1, 64)})["probabilities"]
        times.append(time.perf_counter() - t0)
        correct += int(probs.argmax() == label)
    print(f"backend    {backend}")
    print(f"accuracy   {correct / len(labels):.2%} ({correct}/{len(labels)})")
    print(f"latency    {np.median(times) * 1e6:.1f} us median per image")
    print(f"arena      {sess.arena_bytes} bytes")
    return 0


# -- parser -------------------------------------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="burnedge", description="Take trained neural networks to the edge.")
    p.add_argument("--version", action="version", version=f"burnedge {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("inspect", help="a model: I/O, ops, MACs; a bundle: steps, fused ops, arena timeline")
    s.add_argument("model", type=Path, help="an .onnx model, a .bedge bundle or (--arch) a .safetensors checkpoint")
    s.add_argument("--input-shape", action="append", default=[], metavar="NAME=D0,D1,...")
    cli_inputs.add_bind(s)
    cli_zoo.add_arch_flags(s)
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--timeline", type=Path, metavar="FILE.svg", help="(bundle) draw the arena timeline as SVG")
    cli_trust.add_trust_options(s)
    s.set_defaults(fn=lambda a: cli_inspect.cmd_inspect(a, _shapes(a.input_shape)))

    s = sub.add_parser("run", help="run a model or a bundle on .npy inputs")
    s.add_argument("model", type=Path, help="an .onnx model, a .bedge bundle or (--arch) a .safetensors checkpoint")
    s.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    s.add_argument("--input-shape", action="append", default=[], metavar="NAME=D0,D1,...")
    cli_inputs.add_bind(s)
    cli_zoo.add_arch_flags(s)
    s.add_argument(
        "--backend", help="default: the bundle's own (c), numpy for a model; checked<c> compares every step to numpy"
    )
    s.add_argument("--threads", type=_count("--threads"), default=1, metavar="N", help="cores a C run uses")
    s.add_argument("--output-dir", metavar="DIR", help="write each output as DIR/NAME.npy")
    cli_trust.add_trust_options(s)
    s.set_defaults(fn=cmd_run)

    s = sub.add_parser("export", help="compile a model into an edge bundle (.bedge) for a target")
    s.add_argument("model", type=Path)
    s.add_argument("-o", "--output", type=Path, metavar="OUT.bedge", help="default: MODEL_NAME.bedge here")
    s.add_argument("--input-shape", action="append", default=[], metavar="NAME=D0,D1,...")
    cli_inputs.add_bind(s)
    cli_zoo.add_arch_flags(s)
    s.add_argument("--target", default="host")
    s.add_argument("--unpacked", action="store_true", help="write a folder instead of one archive")
    cli_bundle.add_source_flags(s)
    s.add_argument("--test-vectors", type=_count("--test-vectors", 0), default=2, metavar="N", help="default 2")
    s.add_argument("--quantize", choices=["int8"], help="quantize first (needs --calibration)")
    cli_trust.add_sign_option(s)
    cli_bundle.add_int8_options(s)
    s.set_defaults(fn=lambda a: cli_bundle.cmd_export(a, _shapes(a.input_shape)))

    s = sub.add_parser("quantize", help="post-training int8 quantization into an edge bundle, with an accuracy report")
    s.add_argument("model", type=Path)
    s.add_argument("-o", "--output", type=Path, metavar="OUT.bedge", help="default: MODEL_NAME.bedge here")
    s.add_argument("--input-shape", action="append", default=[], metavar="NAME=D0,D1,...")
    cli_inputs.add_bind(s)
    cli_zoo.add_arch_flags(s)
    s.add_argument("--target", default="host")
    s.add_argument("--unpacked", action="store_true", help="write a folder instead of one archive")
    cli_bundle.add_source_flags(s)
    s.add_argument("--test-vectors", type=_count("--test-vectors", 0), default=2, metavar="N", help="default 2")
    cli_bundle.add_int8_options(s, required=True)
    cli_trust.add_sign_option(s)
    s.set_defaults(fn=lambda a: cli_bundle.cmd_export(a, _shapes(a.input_shape)), quantize="int8")

    s = sub.add_parser("verify", help="run a bundle's test vectors on its library; PASS or FAIL")
    s.add_argument("bundle", type=Path)
    s.add_argument("--threads", type=_count("--threads"), default=1, metavar="N")
    s.add_argument("--tolerance", type=float, default=1e-4, help="largest relative error of a float output")
    cli_trust.add_trust_options(s)
    s.set_defaults(fn=cli_bundle.cmd_verify)

    s = sub.add_parser("bench", help="median latency of a bundle, its ratio to onnxruntime, and memory")
    s.add_argument("bundle", type=Path)
    s.add_argument("--vs", choices=["onnxruntime", "none"], help="default: onnxruntime when installed")
    s.add_argument("--threads", type=_count("--threads"), default=1, metavar="N")
    s.add_argument("--runs", type=_count("--runs"), default=100, metavar="N")
    s.add_argument("--warmup", type=_count("--warmup", 0), default=5, metavar="N")
    s.add_argument("--profile", action="store_true", help="time every step (profiled<backend>) and print each share")
    cli_trust.add_trust_options(s)
    s.set_defaults(fn=cli_bundle.cmd_bench)

    s = sub.add_parser("demo", help="the built-in example: export a digits classifier, run the bundle in C")
    s.add_argument("--backend", default="c", help="c (export and run the bundle; default) or numpy")
    s.set_defaults(fn=cmd_demo)

    cli_ops.add_command(sub)
    cli_targets.add_commands(sub, _count)
    cli_trust.add_commands(sub)
    cli_zoo.add_command(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the CLI; returns the exit status (2 for a user error, with a one-line message on stderr)."""
    try:
        args = _parser().parse_args(argv)
        return int(args.fn(args))
    except BurnedgeError as exc:
        print(f"burnedge: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("burnedge: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `burnedge ops | head`: the reader left; that is not an error
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's final flush quiet
        return 0
    except OSError as exc:  # a file or folder the command cannot read or write (permissions, a full disk ...)
        where = f" {exc.filename!r}" if exc.filename else ""
        print(f"burnedge: error: cannot use{where}: {exc.strerror or exc}", file=sys.stderr)
        return 2
