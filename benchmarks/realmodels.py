"""The real-model table for the README: float error, int8 cosine, int8/float latency and arena, per model.

For each model of tests/realmodels/catalog.py (fetched and cached as the tests do): the float bundle (C backend,
host) against onnxruntime on held-out real inputs (max |error| / max |output|, worst output); the int8 bundle made
with the default options of `burnedge.export(..., quantize="int8")` on the same calibration inputs as the tests,
its cosine to float on the held-out inputs (or the refusal); the median latency of int8 over float (one thread,
both loaded in this process, runs alternating so machine noise hits them alike) and int8 arena / float arena.

    python benchmarks/realmodels.py [--models a,b] [--runs 10]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import burnedge  # noqa: E402
from tests.realmodels.catalog import MODELS, chosen  # noqa: E402
from tests.realmodels.measure import check_float, check_int8  # noqa: E402


def _medians(bundles: list[Path], feeds, runs: int) -> list[float]:
    """Median seconds per run of each bundle on `feeds`, after a warm-up, the bundles' runs interleaved."""
    sessions = [burnedge.Session(b, threads=1) for b in bundles]
    for s in sessions:
        s.run(feeds)
    times: list[list[float]] = [[] for _ in sessions]
    for _ in range(runs):
        for s, t in zip(sessions, times):
            start = time.perf_counter()
            s.run(feeds)
            t.append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def short(reason: str) -> str:
    """A table cell's worth of a reason: the ops an export lacks, the cosine a refusal measured, else its start."""
    for pattern, cell in ((r"backend: (.*?) \(opset", "unsupported {}"), (r"(cosine [0-9.]+ < [0-9.]+)", "{}")):
        found = re.search(pattern, reason)
        if found:
            return cell.format(found.group(1)).replace("|", "/")
    return reason[:70].replace("|", "/")


def _arena(bundle: Path) -> int:
    return int(burnedge.Session(bundle).manifest["arena_bytes"])


def row(name: str, runs: int) -> str:
    m = MODELS[name]
    with tempfile.TemporaryDirectory() as tmp:
        f, q = check_float(m, Path(tmp)), check_int8(m, Path(tmp), allow_below_target=True)
        err = f"{f.value:.1e}" if f.kind == "measured" else f"fails: {short(f.reason)}"
        cos = f"{q.value:.4f}" if q.kind == "measured" else f"{q.kind}: {short(q.reason)}".replace("fail:", "fails:")
        if q.bundle and not burnedge.Session(q.bundle).manifest["quantization"].get("target_met", True):
            cos += " (refused by default; numbers with --allow-below-target)"
        speed = arena = "-"
        if f.bundle and q.bundle:
            t_float, t_int8 = _medians([f.bundle, q.bundle], m.held_out()[0], runs)
            speed = f"{t_int8 / t_float:.2f} ({t_int8 * 1e3:.1f} / {t_float * 1e3:.1f} ms)"
            a_float, a_int8 = _arena(f.bundle), _arena(q.bundle)
            arena = f"{a_int8 / a_float:.2f} ({a_int8 / 2**20:.1f} / {a_float / 2**20:.1f} MiB)"
        elif f.bundle:
            (t_float,) = _medians([f.bundle], m.held_out()[0], runs)
            speed = f"- (float {t_float * 1e3:.1f} ms)"
    return f"| {name} | {err} | {cos} | {speed} | {arena} |"


def machine() -> str:
    """The CPU model and the SIMD features the C kernels use, from /proc/cpuinfo."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown CPU"
    name = next((ln.split(":", 1)[1].strip() for ln in info.splitlines() if ln.startswith("model name")), "?")
    flags = set(next((ln.split(":", 1)[1].split() for ln in info.splitlines() if ln.startswith("flags")), []))
    wanted = ("avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni")
    return f"{name}, {os.cpu_count()} cores; " + ", ".join(f"{f} {'yes' if f in flags else 'no'}" for f in wanted)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="", help="comma-separated names (default: all)")
    ap.add_argument("--runs", type=int, default=10, help="timed runs per bundle (median)")
    a = ap.parse_args()
    names = chosen(a.models)
    warnings.simplefilter("ignore")
    print(f"Measured on {machine()}; median of {a.runs} runs after a warm-up.\n")
    print("| model | float: max rel err vs onnxruntime | int8 (default options): cosine to float "
          "| int8 / float latency (1 thread, C) | arena int8 / float |")  # fmt: skip
    print("|---|---|---|---|---|")
    for name in names:
        print(row(name, a.runs), flush=True)


if __name__ == "__main__":
    main()
