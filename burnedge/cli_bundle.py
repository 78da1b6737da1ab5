"""The bundle commands of the CLI (export, verify, bench, and inspect of a bundle): parsing and printing only."""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from . import cli_trust
from .cli_inputs import binds, parent_folder, writable_folder
from .errors import BurnedgeError
from .files import write_atomic

__all__ = ["add_int8_options", "add_source_flags", "cmd_bench", "cmd_export", "cmd_verify", "inspect_bundle"]

WITH_SOURCE = "export it with --with-source"


def _bytes(n: int) -> str:
    return f"{n:,} bytes"


def _ratio(arena: int, bound: int) -> str:
    return f"{arena / bound:.2f}x" if bound else "-"


def add_source_flags(s: argparse.ArgumentParser) -> None:
    """--with-source stores the source .onnx in the bundle; --no-source (the old opt-out) is accepted and ignored."""
    s.add_argument(
        "--with-source", action="store_true", help="also store the source .onnx (for bench --vs onnxruntime)"
    )
    s.add_argument("--no-source", action="store_true", help=argparse.SUPPRESS)


def add_int8_options(s: argparse.ArgumentParser, required: bool = False) -> None:
    """The options of `quantize` and `export --quantize int8`."""
    from .quantize.calibrate import CALIBRATORS

    s.add_argument(
        "--calibration",
        type=Path,
        required=required,
        metavar="DATA",
        help="a folder of .npy/.npz files or one .npz (see the README: int8)",
    )
    s.add_argument(
        "--validation",
        type=Path,
        metavar="DATA",
        help="inputs the calibration never saw, as DATA: the report and the target measure on them",
    )
    s.add_argument(
        "--method",
        default="auto",
        choices=["auto", *sorted(CALIBRATORS)],
        help="calibrator (default auto: tries each, keeps the best measured)",
    )
    s.add_argument(
        "--keep-float",
        action="append",
        default=[],
        metavar="auto|none|NODE[,NODE...]",
        help="nodes kept in float: NODE names (repeatable), on top of auto (the default: the layers adding the "
        "most error, within --keep-float-budget, until the target is met); none turns auto off",
    )
    s.add_argument(
        "--keep-float-budget",
        default="10%",
        metavar="N|P%",
        help="how many layers auto may keep in float: a count, or a share of the int8 layers (default 10%%)",
    )
    s.add_argument(
        "--state",
        action="append",
        default=[],
        metavar="IN=OUT|none",
        help="a state input and the output fed back into it (calibrate and measure streaming); default: paired "
        "by name (h/hn, c/cn, X_in/X_out ...); none: no state",
    )
    s.add_argument(
        "--allow-below-target",
        action="store_true",
        help="write the bundle even when int8 misses the target (cosine 0.99), with a warning",
    )
    s.add_argument("--report", type=Path, metavar="FILE", help="write the accuracy report (FILE.html: with a plot)")


def cmd_export(a: argparse.Namespace, shapes: dict[str, tuple[int, ...]]) -> int:
    from . import bundle
    from .bundle import keys
    from .cli_zoo import arch_model
    from .exporter import export

    key = keys.load_private(a.sign) if a.sign else None  # a bad key fails before the export, not after
    model = arch_model(a, shapes)  # --arch: the zoo Model of a checkpoint, its shapes already fixed
    out = a.output if a.output is not None else Path((model.name if model else a.model.stem) + bundle.SUFFIX)
    options = dict(
        target=a.target,
        input_shapes=None if model else shapes,
        test_vectors=a.test_vectors,
        unpacked=a.unpacked,
        include_source=a.with_source,
        bind=None if model else binds(a.bind),
    )
    source = model or a.model
    parent_folder(getattr(a, "report", None), "--report")
    writable_folder(out, "-o")
    if getattr(a, "quantize", None):
        path = _export_int8(a, source, out, options)
    else:
        int8_only = ("calibration", "validation", "keep_float", "report")
        if any(getattr(a, k, None) for k in int8_only):
            raise BurnedgeError("--calibration, --validation, --keep-float and --report need --quantize int8")
        path = export(source, out, **options)
    if key is not None:
        bundle.sign(path, key)
    b = bundle.read(path, require_trust=key is None)  # reads back what was written: the hashes hold
    m = b.manifest
    size = sum(len(d) for d in b.members.values())
    print(f"exported   {b.name} -> {path} ({'folder' if a.unpacked else 'archive'}, {_bytes(size)})")
    print(f"target     {m['target']}")
    print(f"steps      {m['steps']}")
    bound = m["arena_lower_bound_bytes"]
    print(f"arena      {_bytes(b.arena_bytes)} (lower bound {bound:,}: {_ratio(b.arena_bytes, bound)}; {m['planner']})")
    print(f"weights    {_bytes(b.weight_bytes)}")
    print(f"vectors    {len(m['vectors'])} test vector(s); check them with: burnedge verify {path}")
    print(f"signed     {b.trust.why.removeprefix('it is ')}")
    return 0


def _export_int8(a: argparse.Namespace, source: Any, out: Path, options: dict[str, Any]) -> Path:
    """Quantizes and exports; prints the accuracy report (worst 20 layers) and where the full one went. Below the
    target it prints the report all the same, then the error says what to try (status 2, no bundle)."""
    from .errors import QuantizationTargetError
    from .exporter import export_int8

    if a.calibration is None:
        raise BurnedgeError("--quantize int8 needs --calibration DATA (a folder of .npy/.npz files or one .npz)")
    names = [k.strip() for item in a.keep_float for k in item.split(",") if k.strip()]
    keep = [k for k in names if k.lower() not in ("auto", "none")]
    if not any(k.lower() == "none" for k in names):
        keep.insert(0, "auto")
    try:
        with warnings.catch_warnings():  # the API's warning below the target: the CLI says it in its own words
            warnings.filterwarnings("ignore", "int8 below its target", UserWarning)
            path, report = export_int8(
                source,
                out,
                a.calibration,
                a.method,
                keep,
                a.report,
                scheme=a.quantize,
                allow_below_target=a.allow_below_target,
                state=_state(a.state),
                keep_float_budget=_budget(a.keep_float_budget),
                validation=a.validation,
                **options,
            )
    except QuantizationTargetError as exc:
        exc.report.print(limit=20)
        raise
    report.print(limit=20)
    if not report.meets_target():
        print("burnedge: warning: int8 misses its target; written anyway (--allow-below-target)", file=sys.stderr)
    if a.report:
        print(f"report     {a.report}")
    return path


def _state(items: list[str]) -> Any:
    """--state values: none of them means "auto"; "none" means no state; else the IN=OUT pairs."""
    if not items or [i.lower() for i in items] == ["auto"]:
        return "auto"
    if any(i.lower() == "none" for i in items):
        if len(items) > 1:
            raise BurnedgeError("--state none pairs nothing; give it alone")
        return None
    return items


def _budget(text: str) -> int | float:
    """--keep-float-budget: N (a count of layers) or P% (a share of the int8 layers)."""
    t = text.strip()
    try:
        if t.endswith("%"):
            share = float(t[:-1]) / 100
            if not 0 < share <= 1:
                raise ValueError
            return share
        n = int(t)
        if n < 0:
            raise ValueError
        return n
    except ValueError:
        raise BurnedgeError(
            f"--keep-float-budget {text!r}: expected a count N >= 0 or a share P% in (0, 100]"
        ) from None


def cmd_verify(a: argparse.Namespace) -> int:
    from .verifier import verify

    checks = verify(a.bundle, threads=a.threads, tolerance=a.tolerance, trust=cli_trust.trust_of(a))
    for c in checks:
        print(
            f"vector {c.vector:<3d} {c.output:24s} max abs error {c.max_abs:.3g}  relative {c.relative:.3g}  "
            f"{'ok' if c.ok else 'MISMATCH'}{f' (rounding allows {c.allowed:.3g})' if c.allowed else ''}"
        )
    worst = max(checks, key=lambda c: (not c.ok, c.relative))  # a mismatch first, then the worst relative error
    print(
        f"max error  relative {worst.relative:.3g} (tolerance {a.tolerance:g}) at vector {worst.vector} "
        f"output {worst.output!r}, whose max abs error is {worst.max_abs:.3g}"
    )
    ok = all(c.ok for c in checks)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def inspect_bundle(a: argparse.Namespace) -> int:
    from . import bundle, timeline

    b = bundle.read(a.model, cli_trust.trust_of(a), require_trust=False)  # reading JSON runs nothing
    parent_folder(a.timeline, "--timeline")
    optional = {"burnedge_version": "?", "target": "?", "planner": "?", "arena_lower_bound_bytes": b.arena_bytes}
    m, plan = {**b.manifest, **{k: v for k, v in optional.items() if b.manifest.get(k) is None}}, b.plan
    steps, buffers = plan["steps"], plan["buffers"]
    if a.timeline:
        svg = timeline.svg(buffers, len(steps), b.arena_bytes, m["arena_lower_bound_bytes"], title=b.name)
        write_atomic(a.timeline, svg.encode())
    if a.json:
        info = {
            "bundle": str(b.path),
            **{k: m[k] for k in ("format_version", "burnedge_version", "model", "target", "inputs", "outputs")},
            **{k: m[k] for k in ("arena_bytes", "arena_lower_bound_bytes", "planner", "weight_bytes")},
            "steps": steps,
            "buffers": buffers,
            "members": {n: f["bytes"] for n, f in m["files"].items()},
            "trust": {"trusted": b.trust.trusted, "key_id": b.trust.key_id, "why": b.trust.why},
        }
        print(json.dumps(info, indent=2))
        return 0
    size = sum(len(d) for d in b.members.values())
    print(f"bundle     {b.path} (format {m['format_version']}, burnedge {m['burnedge_version']}, {_bytes(size)})")
    print(f"model      {b.name}   target {m['target']}   libraries {', '.join(m['libraries']) or '-'}")
    print(f"trust      {b.trust.why}" + ("" if b.trust.trusted else ": it would not run here"))
    for kind in ("inputs", "outputs"):
        for t in m[kind]:
            where = f"@{t['offset']}" if t.get("offset") is not None else "(constant)"
            print(f"{kind[:-1]:10s} {t['name']:24s} {t['dtype']:8s} {str(t['shape']):18s} {where}")
    bound = m["arena_lower_bound_bytes"]
    print(f"arena      {_bytes(b.arena_bytes)} (lower bound {bound:,}: {_ratio(b.arena_bytes, bound)}; {m['planner']})")
    print(f"weights    {_bytes(b.weight_bytes)}")
    print(f"steps      {len(steps)} (from {sum(len(s['ops']) for s in steps)} ONNX nodes)")
    width = max([len(s["op"]) for s in steps] + [2])
    print(f"  {'#':>4s}  {'op':{width}s}  ONNX ops fused -> outputs")
    for s in steps:
        outs = ", ".join(f"{t['name']}@{t['offset']}" for t in s["outputs"] if t.get("offset") is not None)
        print(f"  {s['index']:4d}  {s['op']:{width}s}  {'+'.join(s['ops'])} -> {outs}")
    print("arena timeline (# = live; -1 writes the inputs, the last step reads the outputs)")
    print(timeline.text(buffers, len(steps)))
    if a.timeline:
        print(f"wrote the timeline picture to {a.timeline}")
    return 0


def _ort_session(b: Any, threads: int):
    if b.onnx is None:
        raise BurnedgeError(f"{b.path}: the bundle carries no source model to run on onnxruntime ({WITH_SOURCE})")
    try:
        import onnxruntime as ort
    except ImportError:
        raise BurnedgeError("--vs onnxruntime: onnxruntime is not installed (pip install onnxruntime)") from None
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    try:
        return ort.InferenceSession(b.onnx, so, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types
        raise BurnedgeError(f"onnxruntime cannot load the bundle's model: {exc}") from None


def cmd_bench(a: argparse.Namespace) -> int:
    from . import bundle
    from .bundle.vectors import as_declared
    from .session import Session

    if a.runs < 1 or a.warmup < 0:
        raise BurnedgeError("--runs must be >= 1 and --warmup >= 0")
    b = bundle.read(a.bundle, cli_trust.trust_of(a))
    sess = Session(b, backend=f"profiled<{b.backend}>" if a.profile else b.backend, threads=a.threads)
    vectors = b.vectors()
    feeds = vectors[0][0] if vectors else {t.name: np.zeros(t.shape, t.dtype) for t in b.inputs}
    feeds = as_declared(feeds, {t.name: t.shape for t in b.inputs})  # a scalar of an older bundle: shape (1,)
    for _ in range(a.warmup):
        sess.run(feeds)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    vs = a.vs
    if vs is None:  # compare with onnxruntime when it is installed and the bundle carries its model
        vs = "onnxruntime" if b.onnx is not None and importlib.util.find_spec("onnxruntime") else "none"
    ort = _ort_session(b, a.threads) if vs == "onnxruntime" else None
    ort_feeds = {}
    if ort is not None:
        ort_feeds = {i.name: feeds[i.name] for i in ort.get_inputs() if i.name in feeds}
        for _ in range(a.warmup):
            ort.run(None, ort_feeds)
    ours, theirs = [], []
    for _ in range(a.runs):  # interleaved, so both see the same machine state
        t0 = time.perf_counter()
        sess.run(feeds)
        ours.append(time.perf_counter() - t0)
        if ort is not None:
            t0 = time.perf_counter()
            ort.run(None, ort_feeds)
            theirs.append(time.perf_counter() - t0)
    print(f"bundle     {b.path} ({b.name}, target {b.manifest['target']})")
    print(f"runs       {a.runs} (after {a.warmup} warm-up), threads {a.threads}" + (", interleaved" if ort else ""))
    print(f"burnedge   median {_us(ours)}   p10 {_us(ours, 10)}   p90 {_us(ours, 90)}")
    if ort is not None:
        ratio = float(np.median(ours) / np.median(theirs))
        print(f"onnxrt     median {_us(theirs)}   p10 {_us(theirs, 10)}   p90 {_us(theirs, 90)}")
        verdict = "faster" if ratio < 1 else "slower"
        print(f"ratio      {ratio:.2f}x onnxruntime's time (burnedge {verdict})")
    elif b.onnx is None:
        print(f"onnxrt     not compared: the bundle carries no source model ({WITH_SOURCE} to compare)")
    planned = b.arena_bytes + b.weight_bytes
    print(
        f"memory     arena {b.arena_bytes:,} + weights {b.weight_bytes:,} = {_bytes(planned)} planned; "
        f"process max RSS {rss / 2**20:.1f} MiB{' (before onnxruntime loaded)' if ort else ''}"
    )
    if a.profile:
        _print_profile(sess.executable.profile())
    return 0


def _print_profile(rows: list[Any]) -> None:
    """Each step's median time over the runs and its share of the whole, in plan order."""
    total = sum(r.seconds for r in rows)
    print(f"profile    {len(rows)} steps, {total * 1e6:.1f} us in all (median of each step over the runs)")
    print(f"  {'#':>4s} {'time':>12s} {'share':>6s}  step")
    for r in rows:
        print(f"  {r.step:4d} {r.seconds * 1e6:9.2f} us {r.share:6.1%}  {r.label}")


def _us(times: list[float], q: float = 50) -> str:
    return f"{np.percentile(times, q) * 1e6:10.1f} us"
