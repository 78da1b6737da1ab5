"""The worker pool's break-even (kernels/workers.h): one parallel loop of a given amount of work on 1 and on 2
threads, interleaved, with the workers awake (loops back to back) and asleep (an idle gap past their spin first).

A loop of N items does about N ns of arithmetic on one core. Per size the table gives the medians and the 90th
percentiles of both thread counts and the ratio t2 / t1 (below 1: the second thread pays). The first size from
which two threads stay at or below one, awake and asleep, is the least work worth a split on this machine: the
kernels' thresholds (BE_PAR_MIN_QMACS in reference/isa.h, the MAC counts in the kernels) should sit above it. On a loaded
machine the worker rarely gets a core: the ratio stays near 1, and what matters is that it never goes above.

    python benchmarks/bench_workers.py [--repeats 301] [--gap-us 200]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from burnedge.backends.c.build import KERNEL_DIR, host_toolchain  # noqa: E402

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "workers.h"

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static float data[1024];
static volatile float sink;

/* about 1 ns per item: a dependent chain of multiply-adds */
static void work(void *ctx, int tid, long lo, long hi) {
    (void)ctx, (void)tid;
    float s = 0;
    for (long i = lo; i < hi; i++) s = s * 0.999f + data[i & 1023];
    sink = s;
}

static int cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    const int reps = atoi(argv[1]);
    const double gap = atof(argv[2]) * 1e3;
    for (int i = 0; i < 1024; i++) data[i] = (float)i;
    double *t[3] = {0, malloc(reps * sizeof(double)), malloc(reps * sizeof(double))};
    for (long n = 250; n <= 512000; n *= 2) {
        for (int r = 0; r < reps; r++)
            for (int th = 1; th <= 2; th++) {
                for (double g = now(); now() - g < gap;) {}
                const double t0 = now();
                be_parallel(th, n, work, NULL);
                t[th][r] = now() - t0;
            }
        qsort(t[1], reps, sizeof(double), cmp);
        qsort(t[2], reps, sizeof(double), cmp);
        printf("%ld %.3f %.3f %.3f %.3f\n", n, t[1][reps / 2] / 1e3, t[2][reps / 2] / 1e3, t[1][reps * 9 / 10] / 1e3,
               t[2][reps * 9 / 10] / 1e3);
    }
    return 0;
}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=301)
    ap.add_argument("--gap-us", type=float, default=200.0, help="idle time before each loop when asleep")
    args = ap.parse_args()
    tc = host_toolchain()
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp) / "driver.c", Path(tmp) / "driver"
        src.write_text(DRIVER)
        inc = ["-I", str(KERNEL_DIR), "-I", str(KERNEL_DIR / "reference")]
        flags = [f for f in tc.cflags if f != "-fPIC"]
        subprocess.run([tc.cc, *flags, *inc, str(src), str(KERNEL_DIR / "reference" / "workers.c"), "-o", str(exe),
                        *tc.ldflags], check=True)  # fmt: skip
        rows = {}
        for state, gap in (("awake", 0.0), ("asleep", args.gap_us)):
            out = subprocess.run([str(exe), str(args.repeats), str(gap)], capture_output=True, text=True, check=True)
            rows[state] = [[float(v) for v in line.split()] for line in out.stdout.strip().splitlines()]
    print("| work (items ~ ns) | workers | 1 thread us | 2 threads us | t2 / t1 | p90 1 thread | p90 2 threads |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for state, table in rows.items():
        for n, t1, t2, p1, p2 in table:
            print(f"| {int(n)} | {state} | {t1:.2f} | {t2:.2f} | {t2 / t1:.2f} | {p1:.2f} | {p2:.2f} |")
    sizes = [int(r[0]) for r in rows["awake"]]
    pays = [all(rows[s][i][2] <= rows[s][i][1] for s in rows) for i in range(len(sizes))]
    even = next((sizes[i] for i in range(len(sizes)) if all(pays[i:])), None)
    said = f"{even} items (~{even / 1000:.1f} us of work)" if even else "none (two threads never paid)"
    print(f"\nbreak-even: {said}")


if __name__ == "__main__":
    main()
