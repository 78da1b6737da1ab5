"""The NEON requantisation (kernels/arm/arm_qgemm.h be_rq4n) against the rule itself (qgemm.h be_rq1's
t = floor((clamp(acc) * m + 2^(s-1)) / 2^s)) on a million accumulators of every normalised (m, s, lim) that the
lowering makes (lower/quantized.py rq_params), lanes of mixed and of uniform shifts, compiled for armv7 and
aarch64 and run under QEMU user mode with the boards' CPUs. The short form (s >= 32: vqdmulh + rounding shift)
and the 64-bit form must both agree with the rule bit for bit."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from burnedge.backends.c.build import KERNEL_DIR
from burnedge.backends.c.cross import toolchain
from burnedge.targets import get

pytestmark = [pytest.mark.slow, pytest.mark.boards]

PROGRAM = r"""
#include <stdio.h>
#include "arm_qgemm.h"

static uint64_t st = 88172645463325252ull;
static uint64_t rnd(void) { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return st; }

/* a normalised parameter set of lower/quantized.py rq_params: m in [2^30, 2^31) (or the zero pair (0, 32)) */
static void params(int32_t *m, int32_t *s, int32_t *lim, int lo_s) {
    if (rnd() % 50 == 0) { *m = 0; *s = 32; }
    else { *m = (int32_t)((1u << 30) + (uint32_t)(rnd() % (1u << 30))); *s = lo_s + (int32_t)(rnd() % (63 - lo_s)); }
    *lim = *s <= 20 ? 1 : (*s <= 31 ? (1 << (*s - 21)) : INT32_MAX);
}

static int32_t acc_value(int32_t lim) {
    switch (rnd() % 8) {
    case 0: return INT32_MIN;
    case 1: return INT32_MAX;
    case 2: return (rnd() & 1) ? lim : -lim;
    case 3: return (int32_t)(rnd() % 2001) - 1000;
    default: return (int32_t)(uint32_t)rnd();
    }
}

int main(void) {
    long bad = 0, n = 0, shortform = 0;
    for (int it = 0; it < 250000; it++) {
        int32_t m[4], s[4], lim[4], a[4], got[4];
        const int uniform = it & 1, lo_s = (it & 2) ? 32 : 1; /* half the vectors take the short form */
        for (int l = 0; l < 4; l++) {
            params(&m[l], &s[l], &lim[l], lo_s);
            if (uniform && l) m[l] = m[0], s[l] = s[0], lim[l] = lim[0];
            a[l] = acc_value(lim[l]);
        }
        be_rqn q = be_rqn_make(vld1q_s32(m), vld1q_s32(s), vld1q_s32(lim));
        shortform += q.hi;
        vst1q_s32(got, be_rq4n(vld1q_s32(a), &q));
        for (int l = 0; l < 4; l++, n++) {
            int64_t c = a[l] < -lim[l] ? -lim[l] : (a[l] > lim[l] ? lim[l] : a[l]);
            int64_t want = (c * m[l] + ((int64_t)1 << (s[l] - 1))) >> s[l];
            if (got[l] != want && bad++ < 5)
                printf("acc %d m %d s %d lim %d: %d, the rule %lld\n", a[l], m[l], s[l], lim[l], got[l],
                       (long long)want);
        }
    }
    printf("checked %ld lanes, %ld short-form vectors, %ld wrong\n", n, shortform, bad);
    return bad != 0;
}
"""


@pytest.mark.parametrize("target", ["rpi3", "rpi4", "rpi5"])
def test_neon_requantisation_is_the_rule(target, tmp_path):
    t = get(target)
    tc = toolchain(t)
    if shutil.which(t.emulator.command[0]) is None:
        pytest.skip(f"{t.emulator.command[0]} is missing")
    src, exe = tmp_path / "rq.c", tmp_path / "rq"
    src.write_text(PROGRAM)
    inc = [f"-I{KERNEL_DIR / d}" for d in ("", "reference", "arm")]
    subprocess.run([tc.cc, "-O2", "-static", *t.flags, *inc, str(src), "-o", str(exe)], check=True)
    proc = subprocess.run([*t.emulator.command, str(exe)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "checked 1000000 lanes" in proc.stdout and " 0 wrong" in proc.stdout, proc.stdout
    shortform = int(proc.stdout.split(" short-form")[0].split()[-1])
    assert 100_000 < shortform < 200_000, proc.stdout  # both forms were exercised
