"""The benchmark table: burnedge's C backend against onnxruntime per model, fp32 and int8, per thread count, with
the efficiency against this machine's arithmetic limit measured in the same run.

Per model and thread count, five engines run side by side in one process:
  fp32  burnedge (Session on the C backend, threads=N) and onnxruntime, on the float model;
  int8  burnedge's own int8 (quantize_model: minmax, per-channel weights, nothing kept float) and onnxruntime's own
        QDQ model (quantize_static: MinMax, per-channel, int8 weights and activations), both calibrated on the
        same batches; and burnedge running onnxruntime's QDQ file (its QDQ import), the same int8 model on both.
(burnedge has no QDQ ONNX export, so onnxruntime cannot run burnedge's own int8 model.)
Every engine warms up, then the runs alternate (with threads > 1 in blocks of BLOCK runs per engine, each block after
SETTLE seconds of quiet and one untimed run: an engine's workers keep spinning a while after its last run and take
the cores the next one needs; on the 2-core VM, onnxruntime's spun for ~40 ms, and burnedge's next four ResNet-18
int8 runs took 11-15 ms instead of 7.5, 2026-12-04); the table gives medians.
GFLOP/s and GOP/s = 2 x the model's multiply-adds (burnedge.analysis, what `burnedge inspect` prints) / median
time; efficiency = that over N x the per-core limit (machine_limits.py: FMA for fp32, VNNI or AVX2 for int8).

    python benchmarks/bench_table.py [--models mlp,resnet8] [--threads 1 2] [--repeats 50] [--quick] [--json F]
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import burnedge  # noqa: E402
from benchmarks import machine_limits  # noqa: E402
from burnedge.analysis import summarize  # noqa: E402
from burnedge.examples import HERE as EXAMPLES  # noqa: E402
from burnedge.quantize import load_calibration, quantize_model  # noqa: E402
from tests.models import suite  # noqa: E402

# the order: large models first; "mlp" is the digits MLP of burnedge/examples (real calibration images)
DEFAULT_MODELS = ["resnet18", "mobilenet_v2", "transformer", "resnet8", "ds_cnn", "mobilenet_v1_025",
                  "fc_autoencoder", "mlp"]  # fmt: skip
BLOCK = 10  # runs in a row per engine with threads > 1 (see the docstring)
SETTLE = 0.1  # seconds of quiet before each such block, then one untimed run (see the docstring)
ENGINES = ("be_f32", "ort_f32", "be_int8", "ort_int8", "be_ort_qdq")


@dataclass
class Case:
    """One model, ready to time: its float file, one feed, calibration batches and multiply-adds."""

    name: str
    path: Path
    feeds: dict[str, np.ndarray]
    calibration: list[dict[str, np.ndarray]]
    macs: int


def model_file(name: str, cache: Path) -> Path:
    """The suite model's ONNX file in `cache`, built there first if missing (that needs torch)."""
    try:
        return suite.build_model(name, cache)
    except ModuleNotFoundError as exc:
        raise SystemExit(
            f"bench_table: {name}: no built file in {cache} and building it needs {exc.name}, missing here; run "
            f"`python benchmarks/bench_table.py --build-only --cache DIR` where it is and pass --cache DIR here"
        ) from None


def case(name: str, cache: Path, batches: int) -> Case:
    if name == "mlp":
        path = EXAMPLES / "digits_mlp.onnx"
        model = burnedge.load(path)
        calibration = load_calibration(EXAMPLES / "digits_calibration.npz", model.graph)[:batches]
        image = np.load(EXAMPLES / "digits_test.npz")["images"][0].astype(np.float32)
        feeds = {model.inputs[0].name: image.reshape(model.inputs[0].shape)}
    else:
        path = model_file(name, cache)
        model = burnedge.load(path)
        calibration = [suite.example_feeds(path, seed=s) for s in range(1, batches + 1)]
        feeds = suite.example_feeds(path, seed=0)
    return Case(name, path, feeds, calibration, sum(summarize(model.graph).macs.values()))


def ort_session(path: Path, threads: int):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def ort_qdq(c: Case, out: Path) -> Path:
    """onnxruntime's own int8 QDQ model of `c`, calibrated on c.calibration."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.batches = iter(c.calibration)

        def get_next(self):
            return next(self.batches, None)

    pre = out.with_suffix(".pre.onnx")
    quant_pre_process(str(c.path), str(pre), skip_symbolic_shape=True)
    quantize_static(str(pre), str(out), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)  # fmt: skip
    return out


def int8_models(c: Case, tmp: Path) -> tuple[dict[str, object], dict[str, str]]:
    """burnedge's own int8 Model and onnxruntime's QDQ file; a failure is kept as text, the rest still runs."""
    made: dict[str, object] = {}
    errors: dict[str, str] = {}
    try:
        graph, _ = quantize_model(
            burnedge.load(c.path), c.calibration, method="minmax", keep_float=(), target_cosine=None,
            progress=False, report_batches=min(2, len(c.calibration)),
        )  # fmt: skip
        made["be_int8"] = burnedge.Model(graph, f"{c.name}-int8")
    except Exception as exc:  # one engine's failure must not hide the others
        errors["be_int8"] = f"{type(exc).__name__}: {exc}"
    try:
        made["ort_qdq"] = ort_qdq(c, tmp / f"{c.name}.qdq.onnx")
    except Exception as exc:
        errors["ort_int8"] = errors["be_ort_qdq"] = f"{type(exc).__name__}: {exc}"
    return made, errors


def engines(c: Case, int8: dict[str, object], threads: int, errors: dict[str, str], outputs: dict) -> dict:
    """name -> a no-argument callable running one inference, for every engine that could be built; each one's
    first outputs (a list, in the model's output order) go into `outputs`."""
    builders = {
        "be_f32": lambda: burnedge.Session(burnedge.load(c.path), backend="c", threads=threads),
        "ort_f32": lambda: ort_session(c.path, threads),
        "be_int8": lambda: burnedge.Session(int8["be_int8"], backend="c", threads=threads),
        "ort_int8": lambda: ort_session(int8["ort_qdq"], threads),
        "be_ort_qdq": lambda: burnedge.Session(burnedge.load(int8["ort_qdq"]), backend="c", threads=threads),
    }
    calls = {}
    for name, build in builders.items():
        if name in errors:
            continue
        try:
            e = build()
            if isinstance(e, burnedge.Session):
                calls[name] = lambda e=e: list(e.run(c.feeds).values())
            else:
                outs = [o.name for o in e.get_outputs()]
                calls[name] = lambda e=e, outs=outs: e.run(outs, c.feeds)
            outputs[name] = calls[name]()
        except Exception as exc:
            errors[name] = f"{type(exc).__name__}: {exc}"
            calls.pop(name, None)
    return calls


def _block(threads: int, repeats: int) -> int:
    """Runs in a row per engine: BLOCK with threads > 1, but at least 3 blocks (one preempted block is an outlier)."""
    return 1 if threads == 1 else max(1, min(BLOCK, repeats // 3))


def timed(calls: dict[str, object], threads: int, repeats: int, warmup: int) -> dict[str, float]:
    """Median seconds per engine over `repeats` interleaved runs after `warmup` runs each."""
    for _ in range(warmup):
        for f in calls.values():
            f()
    block = _block(threads, repeats)
    times: dict[str, list[float]] = {k: [] for k in calls}
    for _ in range(-(-repeats // block)):
        for k, f in calls.items():
            if block > 1:  # the last engine's workers spin on: let them stop before this one's block
                time.sleep(SETTLE)
                f()
            for _ in range(block):
                t0 = time.perf_counter()
                f()
                times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def row(c: Case, threads: int, med: dict[str, float], limits: machine_limits.Limits, errors) -> dict[str, object]:
    """The numbers of one table row (times in ms, ratios burnedge / onnxruntime, rates in G ops/s)."""
    r: dict[str, object] = {"model": c.name, "threads": threads, "macs": c.macs, "errors": dict(errors)}
    r.update({f"{k}_ms": v * 1e3 for k, v in med.items()})

    def ratio(a: str, b: str) -> float | None:
        return med[a] / med[b] if a in med and b in med else None

    r["fp32_ratio"] = ratio("be_f32", "ort_f32")
    r["int8_ratio"] = ratio("be_int8", "ort_int8")
    r["int8_vs_fp32"] = ratio("be_int8", "be_f32")
    r["qdq_ratio"] = ratio("be_ort_qdq", "ort_int8")
    for k, v in med.items():
        kind = "fp32" if k.endswith("f32") else "int8"
        r[f"{k}_gops"] = 2 * c.macs / v / 1e9
        limit = getattr(limits, kind)
        r[f"{k}_eff"] = 2 * c.macs / v / (limit * threads) if limit else None
    return r


def cosine(want: list[np.ndarray], got: list[np.ndarray]) -> float:
    """Cosine of all outputs together against burnedge fp32's (1: the same direction): int8 that is fast but wrong
    shows here."""
    a = np.concatenate([np.asarray(x, np.float64).ravel() for x in want])
    b = np.concatenate([np.asarray(x, np.float64).ravel() for x in got])
    return float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-300))


def bench(c: Case, threads_list: list[int], repeats: int, warmup: int, limits, tmp: Path) -> list[dict]:
    int8, errors = int8_models(c, tmp)
    rows = []
    for threads in threads_list:
        errs = dict(errors)
        outputs: dict[str, list[np.ndarray]] = {}
        calls = engines(c, int8, threads, errs, outputs)
        rows.append(row(c, threads, timed(calls, threads, repeats, warmup), limits, errs))
        if "be_f32" in outputs:
            rows[-1].update({f"{k}_cosine": cosine(outputs["be_f32"], v) for k, v in outputs.items()})
            for k in ("be_int8", "ort_int8", "be_ort_qdq"):
                if rows[-1].get(f"{k}_cosine", 1) < 0.99:
                    errs[f"{k} accuracy"] = f"cosine {rows[-1][f'{k}_cosine']:.4f} against burnedge fp32 (< 0.99)"
        for k, e in errs.items():
            print(f"{c.name} threads={threads} {k}: {e}", file=sys.stderr)
        del calls
    return rows


def _f(v: object, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}g}" if abs(v) < 100 else f"{v:.0f}"
    return str(v)


def _r(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%" if v >= 0.001 else f"{100 * v:.2g}%"


RATIOS = ("fp32_ratio", "int8_ratio", "int8_vs_fp32", "qdq_ratio")
HEAD = ["model", "MMAC", "threads", "fp32 burnedge ms", "fp32 onnxruntime ms", "fp32 ratio", "fp32 GFLOP/s",
        "fp32 eff.", "int8 burnedge ms", "int8 onnxruntime ms", "int8 ratio", "int8 / fp32", "int8 GOP/s",
        "int8 eff.", "burnedge on ORT's QDQ ms", "QDQ ratio"]  # fmt: skip


def geomeans(rows: list[dict], threads: int) -> dict[str, float | None]:
    out = {}
    for k in RATIOS:
        vals = [r[k] for r in rows if r["threads"] == threads and r[k]]
        out[k] = math.exp(sum(map(math.log, vals)) / len(vals)) if vals else None
    return out


def markdown(meta: dict, rows: list[dict]) -> str:
    lines = [f"_{meta['date']}, {meta['cpu']}; onnxruntime {meta['onnxruntime']}, burnedge {meta['burnedge']}, "
             f"Python {meta['python']}_", "", f"_{meta['limits']}_", "", f"_{meta['method']}_", "",
             "| " + " | ".join(HEAD) + " |", "|---|" + "---:|" * (len(HEAD) - 1)]  # fmt: skip
    for r in rows:
        cells = [r["model"], f"{r['macs'] / 1e6:.3g}", r["threads"], _f(r.get("be_f32_ms")), _f(r.get("ort_f32_ms")),
                 _r(r["fp32_ratio"]), _f(r.get("be_f32_gops")), _pct(r.get("be_f32_eff")),
                 _f(r.get("be_int8_ms")), _f(r.get("ort_int8_ms")), _r(r["int8_ratio"]),
                 _r(r["int8_vs_fp32"]), _f(r.get("be_int8_gops")), _pct(r.get("be_int8_eff")),
                 _f(r.get("be_ort_qdq_ms")), _r(r["qdq_ratio"])]  # fmt: skip
        lines.append("| " + " | ".join(str(x) for x in cells) + " |")
    for t in meta["threads"]:
        g = geomeans(rows, t)
        cells = [f"geo-mean, {t} thread{'s' * (t > 1)}", "", t, "", "", _r(g["fp32_ratio"]), "", "", "", "",
                 _r(g["int8_ratio"]), _r(g["int8_vs_fp32"]), "", "", "", _r(g["qdq_ratio"])]  # fmt: skip
        lines.append("| " + " | ".join(str(x) for x in cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=None, help=f"default: {','.join(DEFAULT_MODELS)}")
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--repeats", type=int, default=None, help="timed runs per engine (default 50; --quick 10)")
    ap.add_argument("--warmup", type=int, default=None, help="untimed runs per engine first (default 5; --quick 2)")
    ap.add_argument("--calibration", type=int, default=None, help="calibration batches (default 8; --quick 2)")
    ap.add_argument("--quick", action="store_true", help="few runs and batches, a short limit measurement")
    ap.add_argument("--json", type=Path, help="also write the raw numbers here")
    ap.add_argument(
        "--cache", type=Path, help="built model files (default $BURNEDGE_MODEL_CACHE or TMP/burnedge-models)"
    )
    ap.add_argument("--build-only", action="store_true", help="build the models' files into --cache (torch) and stop")
    a = ap.parse_args(argv)
    models = [m for arg in (a.models or DEFAULT_MODELS) for m in arg.split(",") if m]
    repeats = a.repeats or (10 if a.quick else 50)
    warmup = a.warmup if a.warmup is not None else 2 if a.quick else 5
    batches = a.calibration or (2 if a.quick else 8)
    if repeats < 1 or batches < 1 or warmup < 0 or min(a.threads) < 1:
        ap.error("--repeats, --calibration and --threads need whole numbers >= 1, --warmup >= 0")
    threads = sorted(set(a.threads))
    cache = a.cache or Path(os.environ.get("BURNEDGE_MODEL_CACHE") or Path(tempfile.gettempdir()) / "burnedge-models")
    unknown = [m for m in models if m != "mlp" and m not in suite.MODELS]
    if unknown:
        ap.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(sorted(suite.MODELS))}, mlp")
    if a.build_only:
        for name in models:
            print(EXAMPLES / "digits_mlp.onnx" if name == "mlp" else model_file(name, cache))
        return 0
    cpu = machine_limits.cpu()
    limits = machine_limits.measure(0.2 if a.quick else 1.0, cpu)
    import onnxruntime

    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu.line(),
        "cpu_model": cpu.model,
        "cores": cpu.cores,
        "flags": cpu.flags,
        "onnxruntime": onnxruntime.__version__,
        "burnedge": burnedge.__version__,
        "python": sys.version.split()[0],
        "threads": threads,
        "repeats": repeats,
        "warmup": warmup,
        "calibration_batches": batches,
        "limits": limits.line(),
        "limit_fp32_flops_per_core": limits.fp32,
        "limit_int8_ops_per_core": limits.int8,
        "limit_modes": limits.measured,
        "method": f"median of {repeats} interleaved runs per engine after {warmup} warm-up runs each (threads > 1: "
        f"in blocks of {_block(2, repeats)}); ratio = burnedge / onnxruntime (below 1: burnedge is faster); int8 "
        f"calibrated on {batches} batches; eff. = achieved / (threads x limit per core)",
    }
    rows = []
    with tempfile.TemporaryDirectory(prefix="burnedge-table-") as tmp:
        for name in models:
            rows += bench(case(name, cache, batches), threads, repeats, warmup, limits, Path(tmp))
    print(markdown(meta, rows))
    if a.json:
        a.json.write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
