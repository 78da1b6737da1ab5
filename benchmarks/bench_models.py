"""burnedge's C backend against onnxruntime on the model suite, side by side in one process.

For each model and thread count: both engines warm up, then their runs alternate (burnedge, onnxruntime,
burnedge, ...) so machine noise hits both alike; the table gives the median latency of each and the ratio
burnedge / onnxruntime (below 1: burnedge is faster). Absolute times on shared machines are noise; the ratio is
the result. With more than one thread the engines alternate in blocks of BLOCK runs: both keep their worker
threads spinning for a while after a run (burnedge's pool ~50 us, onnxruntime's longer), and on a machine with as
many cores as threads the other engine's spinning workers would take the cores a run needs; the first runs of a
block pay for that, the median does not. `--repeat N` runs the whole table N times (models in turn, so slow drifts
of a shared machine spread over all of them) and gives the median of each figure, and the geometric mean of the
ratios per thread count.

    python benchmarks/bench_models.py [--models ds_cnn,resnet8] [--threads 1,2] [--runs 50] [--repeat 5]
                                      [--markdown]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.models import suite  # noqa: E402

BLOCK = 10  # runs in a row per engine with more than one thread (see the docstring)


def _ort_session(path: Path, threads: int):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def bench(name: str, threads: int, runs: int, cache: Path) -> dict[str, object]:
    import burnedge

    path = suite.build_model(name, cache)
    feeds = suite.example_feeds(path, seed=0)
    ours = burnedge.Session(burnedge.load(path), backend="c", threads=threads)
    theirs = _ort_session(path, threads)
    names = [o.name for o in theirs.get_outputs()]
    want = theirs.run(names, feeds)
    got = ours.run(feeds)
    err = max(float(np.max(np.abs(got[n] - w)) / max(float(np.max(np.abs(w))), 1e-30)) for n, w in zip(names, want))
    for _ in range(3):
        ours.run(feeds)
        theirs.run(names, feeds)
    t_ours, t_theirs = [], []
    block = 1 if threads == 1 else BLOCK
    for _ in range(-(-runs // block)):
        for _ in range(block):
            t0 = time.perf_counter()
            ours.run(feeds)
            t_ours.append(time.perf_counter() - t0)
        for _ in range(block):
            t0 = time.perf_counter()
            theirs.run(names, feeds)
            t_theirs.append(time.perf_counter() - t0)
    ours.close()
    a, b = statistics.median(t_ours), statistics.median(t_theirs)
    return {
        "model": name,
        "threads": threads,
        "burnedge_ms": a * 1e3,
        "onnxruntime_ms": b * 1e3,
        "ratio": a / b,
        "arena_kib": ours.arena_bytes / 1024,
        "max_rel_err": err,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(sorted(suite.MODELS)))
    ap.add_argument("--threads", default=f"1,{os.cpu_count() or 1}")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=1, help="whole tables to run; medians of them")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table (for the README)")
    a = ap.parse_args()
    cache = Path(os.environ.get("BURNEDGE_MODEL_CACHE", ROOT / ".cache" / "models"))
    cache.mkdir(parents=True, exist_ok=True)
    threads = sorted({int(t) for t in a.threads.split(",")})
    cases = [(m, t) for m in a.models.split(",") for t in threads]
    tables = [[bench(m, t, a.runs, cache) for m, t in cases] for _ in range(max(a.repeat, 1))]
    rows = [_median_row([table[k] for table in tables]) for k in range(len(cases))]
    import onnxruntime

    head = (
        f"{datetime.date.today()}, {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"onnxruntime {onnxruntime.__version__}, median of {a.runs} interleaved runs "
        f"(in blocks of {BLOCK} with threads > 1)" + (f", median of {a.repeat} tables" if a.repeat > 1 else "")
    )
    if a.markdown:
        print(f"_{head}_\n")
        print("| model | threads | burnedge C (ms) | onnxruntime (ms) | ratio | arena (KiB) | max rel. error |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(
                f"| {r['model']} | {r['threads']} | {r['burnedge_ms']:.3f} | {r['onnxruntime_ms']:.3f} | "
                f"{r['ratio']:.2f} | {r['arena_kib']:.0f} | {r['max_rel_err']:.1e} |"
            )
    else:
        print(head)
        print(f"{'model':18s} {'thr':>3s} {'burnedge ms':>12s} {'ort ms':>10s} {'ratio':>6s} {'arena KiB':>10s}")
        for r in rows:
            print(
                f"{r['model']:18s} {r['threads']:3d} {r['burnedge_ms']:12.3f} {r['onnxruntime_ms']:10.3f} "
                f"{r['ratio']:6.2f} {r['arena_kib']:10.0f}"
            )
    for t in threads:
        ratios = [r["ratio"] for r in rows if r["threads"] == t]
        print(f"geo-mean ratio, {t} thread(s): {statistics.geometric_mean(ratios):.2f} over {len(ratios)} models")


def _median_row(runs: list[dict[str, object]]) -> dict[str, object]:
    """One row of the table from the same case's rows of every table: the median of each figure."""
    row = dict(runs[0])
    for key in ("burnedge_ms", "onnxruntime_ms", "ratio", "max_rel_err"):
        row[key] = statistics.median(r[key] for r in runs)
    return row


if __name__ == "__main__":
    main()
