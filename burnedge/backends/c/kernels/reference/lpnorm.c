/* LpNorm (p = 1 or 2) along the middle axis of [outer, n, inner] (norm.h): y = x / ||x||_p, 0 where the norm is
 * 0. */
#include "burnedge.h"
#include "norm.h"

void be_lpnorm_f32(const float *x, float *y, long outer, long n, long inner, int p, int threads) {
    BE_PARALLEL_FOR(threads > 1 && outer * inner > 1 && outer * n * inner > 32768)
    for (long t = 0; t < outer * inner; t++) {
        long o = t / inner, i = t % inner;
        const float *xl = x + o * n * inner + i;
        float *yl = y + o * n * inner + i;
        float s = 0.0f;
        for (long r = 0; r < n; r++) s += p == 1 ? fabsf(xl[r * inner]) : xl[r * inner] * xl[r * inner];
        float norm = p == 1 ? s : sqrtf(s);
        for (long r = 0; r < n; r++) yl[r * inner] = norm == 0.0f ? 0.0f : xl[r * inner] / norm;
    }
}
