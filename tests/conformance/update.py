"""Runs every node test on a backend and rewrites its expectations file; prints a summary.

python -m tests.conformance.update --backend numpy [--filter SUBSTRING] [--jobs N]
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures as cf
import warnings

from . import expectations, proven
from .harness import run_node_test
from .node_data import node_test_root


def _one(args: tuple[str, str]) -> tuple[str, str, str, tuple[str, ...]]:
    folder, backend = args
    from pathlib import Path

    warnings.simplefilter("ignore")
    o = run_node_test(Path(folder), backend)
    return Path(folder).name, o.status, o.reason, o.bound


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="numpy")
    ap.add_argument("--filter", default="")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--dry", action="store_true", help="print results, leave the expectations file alone")
    a = ap.parse_args()
    root = node_test_root()
    folders = sorted(p for p in root.iterdir() if p.is_dir() and a.filter in p.name)
    old = expectations.read(a.backend)
    results = dict(old)
    reasons: collections.Counter[str] = collections.Counter()
    with cf.ProcessPoolExecutor(a.jobs) as pool:
        for name, status, reason, bound in pool.map(_one, [(str(f), a.backend) for f in folders], chunksize=8):
            note = f"bound {', '.join(bound)}" if bound else ""
            results[name] = (status, note if status == "pass" else reason)
            if status != "pass":
                reasons[reason.split(":")[0]] += 1
                if a.dry:
                    print(f"{status.upper()} {name}: {reason}")
    count = collections.Counter(s for s, _ in results.values())
    print(f"{count['pass']} of {len(results)} pass on {a.backend}; {count['impossible']} impossible in a static plan")
    for r, c in reasons.most_common(15):
        print(f"  {c:5d}  {r}")
    if not a.dry:
        expectations.write(a.backend, results)
        proven.write()  # what `burnedge ops` shows follows the expectations


if __name__ == "__main__":
    main()
