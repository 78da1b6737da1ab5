"""The zoo on the command line: `burnedge zoo` (the architectures) and --arch / --config / --arch-option, which turn
a .safetensors checkpoint into a model for export, quantize, run and inspect. Parsing and printing only."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from typing import Any

from .cli_inputs import UsageError, fmt_shape

__all__ = ["add_arch_flags", "add_command", "arch_model", "no_arch"]


def add_arch_flags(s: argparse.ArgumentParser) -> None:
    s.add_argument("--arch", metavar="NAME", help="the model is a .safetensors checkpoint of this zoo architecture")
    s.add_argument("--config", metavar="CONFIG.json", help="(--arch) the checkpoint's config.json, where it needs one")
    s.add_argument(
        "--arch-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="(--arch) an architecture option, e.g. pooling=mean for bert; repeatable",
    )


def _options(items: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not key or not value:
            raise UsageError(f"--arch-option {item!r}: expected KEY=VALUE (e.g. pooling=mean)")
        try:
            out[key] = json.loads(value)  # numbers, true / false
        except ValueError:
            out[key] = value
    return out


def no_arch(a: argparse.Namespace) -> None:
    """Without --arch: no zoo flags, and no .safetensors model (it holds weights, not an architecture)."""
    if getattr(a, "config", None) or getattr(a, "arch_option", None):
        raise UsageError("--config and --arch-option need --arch NAME (see: burnedge zoo)")
    if str(a.model).lower().endswith(".safetensors"):
        raise UsageError(
            f"{a.model}: a safetensors checkpoint holds weights, not an architecture: give --arch NAME "
            "(burnedge zoo lists them), or write the model in burnedge.nn and trace it"
        )


def arch_model(a: argparse.Namespace, shapes: Mapping[str, tuple[int, ...]]):
    """The zoo Model the arguments name, or None without --arch (the model is then a file to import)."""
    from .zoo import load

    arch = getattr(a, "arch", None)
    if arch is None:
        no_arch(a)
        return None
    if getattr(a, "bind", None):
        raise UsageError("--bind applies to ONNX models, not to a zoo checkpoint (--arch)")
    return load(a.model, input_shapes=shapes, arch=arch, config=a.config, **_options(a.arch_option))


def cmd_zoo(a: argparse.Namespace) -> int:
    from .zoo import ARCHITECTURES

    rows = []
    for name in sorted(ARCHITECTURES):
        arch = ARCHITECTURES[name]
        inputs = [{"name": i.name, "dtype": i.dtype.__name__, "shape": list(i.shape)} for i in arch.inputs({})]
        rows.append(
            {
                "name": name,
                "summary": arch.summary,
                "inputs": inputs,
                "checkpoint": arch.checkpoint,
                "needs_config": arch.needs_config,
                "options": arch.options,
            }
        )
    if a.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{len(rows)} architectures (burnedge export CHECKPOINT.safetensors --arch NAME [--config config.json])")
    for r in rows:
        inputs = ", ".join(f"{i['name']} {i['dtype']}{fmt_shape(i['shape'])}" for i in r["inputs"])
        options = "; options: " + ", ".join(f"{k}={v}" for k, v in r["options"].items()) if r["options"] else ""
        print(f"{r['name']:18s} {r['summary']}")
        print(f"{'':18s}   inputs: {inputs}{options}")
        print(f"{'':18s}   loads:  {r['checkpoint']}")
    return 0


def add_command(sub: Any) -> None:
    s = sub.add_parser("zoo", help="the architectures --arch loads from their upstream checkpoints")
    s.add_argument("--json", action="store_true", help="print one JSON list")
    s.set_defaults(fn=cmd_zoo)
