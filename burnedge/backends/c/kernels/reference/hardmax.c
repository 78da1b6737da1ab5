/* Hardmax (misc.h): one pass per lane finds the first largest value (a NaN wins, as numpy's argmax), then the
 * lane is written as a one-hot row. */
#include "burnedge.h"
#include "workers.h"
#include "misc.h"

typedef struct {
    const float *x;
    float *y;
    long n, inner;
} hardmax_call;

/* lanes lo_ .. hi_-1 */
static void hardmax_lanes(void *ctx_, int tid, long lo_, long hi_) {
    const hardmax_call *c_ = ctx_;
    const float *x = c_->x;
    float *y = c_->y;
    const long n = c_->n, inner = c_->inner;
    (void)tid;
    for (long lane = lo_; lane < hi_; lane++) {
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

void be_hardmax_f32(const float *x, float *y, long outer, long n, long inner, int threads) {
    const int par = threads > 1 && outer * inner > 1 && outer * n * inner > 32768;
    hardmax_call c_ = {x, y, n, inner};
    be_parallel(par ? threads : 1, outer * inner, hardmax_lanes, &c_);
}

