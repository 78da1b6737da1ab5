/* Hardmax (misc.h): one pass per lane finds the first largest value (a NaN wins, as numpy's argmax), then the
 * lane is written as a one-hot row. */
#include "burnedge.h"
#include "misc.h"

void be_hardmax_f32(const float *x, float *y, long outer, long n, long inner, int threads) {
    BE_PARALLEL_FOR(threads > 1 && outer * inner > 1 && outer * n * inner > 32768)
    for (long lane = 0; lane < outer * inner; lane++) {
        long o = lane / inner, i = lane % inner;
        const float *xl = x + o * n * inner + i;
        float *yl = y + o * n * inner + i;
        long best = 0;
        for (long j = 1; j < n; j++) {
            float v = xl[j * inner], b = xl[best * inner];
            if (b != b) break; /* the first NaN already won */
            if (v > b || v != v) best = j;
        }
        for (long j = 0; j < n; j++) yl[j * inner] = j == best ? 1.0f : 0.0f;
    }
}
