/* LpNorm (p = 1 or 2) along the middle axis of [outer, n, inner] (norm.h): y = x / ||x||_p, 0 where the norm is
 * 0. */
#include "burnedge.h"
#include "workers.h"
#include "norm.h"

typedef struct {
    const float *x;
    float *y;
    long n, inner;
    int p;
} lpnorm_call;

/* lanes lo_ .. hi_-1 */
static void lpnorm_lanes(void *ctx_, int tid, long lo_, long hi_) {
    const lpnorm_call *c_ = ctx_;
    const float *x = c_->x;
    float *y = c_->y;
    const long n = c_->n, inner = c_->inner;
    const int p = c_->p;
    (void)tid;
    for (long t = lo_; t < hi_; t++) {
        long o = t / inner, i = t % inner;
        const float *xl = x + o * n * inner + i;
        float *yl = y + o * n * inner + i;
        float s = 0.0f;
        for (long r = 0; r < n; r++) s += p == 1 ? fabsf(xl[r * inner]) : xl[r * inner] * xl[r * inner];
        float norm = p == 1 ? s : sqrtf(s);
        for (long r = 0; r < n; r++) yl[r * inner] = norm == 0.0f ? 0.0f : xl[r * inner] / norm;
    }
}

void be_lpnorm_f32(const float *x, float *y, long outer, long n, long inner, int p, int threads) {
    const int par = threads > 1 && outer * inner > 1 && outer * n * inner > 32768;
    lpnorm_call c_ = {x, y, n, inner, p};
    be_parallel(par ? threads : 1, outer * inner, lpnorm_lanes, &c_);
}

