"""The long fuzz run, on demand: every target (or those named) for EXAMPLES inputs each, spread over JOBS processes.

    python tests/fuzz/long_run.py --examples 100000 --jobs 16 [--targets bundle importer feeds runner]
                                  [--minutes 9] [--shards runner=9 bundle=3 ...]

Each process runs one target's pytest with its share of the inputs and its own hypothesis seed, and appends what
it tried to a tally file (harness.Tally). The summary gives, per target, the inputs tried, how many were refused
with a burnedge error, and the failures (a raw exception, a crash, a hang, a file lost or written outside); the
exit status is 1 when any process failed. `--minutes` stops every process at that wall time (what was tried by
then is still counted: a process writes its tally only at its end, so a stopped one counts 0).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGETS = {
    "bundle": "tests/fuzz/test_fuzz_bundle.py",
    "importer": "tests/fuzz/test_fuzz_importer.py",
    "feeds": "tests/fuzz/test_fuzz_feeds.py",
    "runner": "tests/fuzz/test_fuzz_runner.py",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=100_000, help="inputs per target (default 100000)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes at a time")
    ap.add_argument("--targets", nargs="+", choices=sorted(TARGETS), default=sorted(TARGETS))
    ap.add_argument("--minutes", type=float, default=0, help="stop everything after this long (0: no limit)")
    ap.add_argument("--shards", nargs="*", default=[], help="TARGET=N: processes for a target (else jobs / targets)")
    a = ap.parse_args()
    shares = {t: max(1, a.jobs // len(a.targets)) for t in a.targets}
    shares.update({k: int(v) for k, v in (item.split("=") for item in a.shards)})
    tally = Path(tempfile.mkdtemp(prefix="burnedge-fuzz-")) / "tally.txt"
    logs = tally.parent
    queue = [(t, k) for t in a.targets for k in range(shares[t])]
    running: dict[subprocess.Popen, tuple[str, int]] = {}
    failed: list[tuple[str, int, Path]] = []
    start = time.monotonic()
    while queue or running:
        while queue and len(running) < a.jobs:
            target, k = queue.pop(0)
            n = a.examples // shares[target] + (1 if k < a.examples % shares[target] else 0)
            env = {**os.environ, "BURNEDGE_FUZZ_EXAMPLES": str(n), "BURNEDGE_FUZZ_SEED": str(k),
                   "BURNEDGE_FUZZ_TALLY": str(tally), "PYTHONUNBUFFERED": "1"}  # fmt: skip
            log = logs / f"{target}-{k}.log"
            cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "--tb=native",
                   f"--hypothesis-seed={k}", TARGETS[target]]  # fmt: skip
            proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT)
            running[proc] = (target, k)
        time.sleep(0.5)
        for proc in [p for p in running if p.poll() is not None]:
            target, k = running.pop(proc)
            if proc.returncode != 0:
                failed.append((target, k, logs / f"{target}-{k}.log"))
        if a.minutes and time.monotonic() - start > a.minutes * 60:
            for proc, (target, k) in running.items():
                proc.kill()
                print(f"stopped at the time limit: {target} shard {k}")
            queue.clear()
            running.clear()
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for line in tally.read_text().splitlines() if tally.exists() else []:
        name, tried, refused = line.split()
        counts[name][0] += int(tried)
        counts[name][1] += int(refused)
    print(
        f"{'target':10s} {'inputs':>9s} {'refused':>9s} failures   ({time.monotonic() - start:.0f} s, logs in {logs})"
    )
    for t in a.targets:
        bad = [f for f in failed if f[0] == t]
        print(f"{t:10s} {counts[t][0]:9d} {counts[t][1]:9d} {len(bad)}")
        for _, k, log in bad:
            print(f"  shard {k}: {log}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
