/* RMSNormalization (rmsnorm.h). Per row: ms = sum(x^2) / d accumulated in double (the reference computes its
 * statistics in float64), r = 1 / sqrt(ms + eps), y = (float)(x * r) * scale. Rows are independent: threads
 * split them. */
#include "burnedge.h"
#include "workers.h"
#include "rmsnorm.h"

typedef struct {
    const float *x, *scale;
    float *y;
    long d;
    float eps;
} rmsnorm_call;

static void rmsnorm_rows(void *ctx_, int tid, long lo_, long hi_) {
    const rmsnorm_call *c_ = ctx_;
    const float *x = c_->x, *scale = c_->scale;
    float *y = c_->y;
    const long d = c_->d;
    const float eps = c_->eps;
    (void)tid;
    for (long r = lo_; r < hi_; r++) {
        const float *xr = x + r * d;
        float *yr = y + r * d;
        double s = 0.0;
        for (long i = 0; i < d; i++) s += (double)xr[i] * (double)xr[i];
        double inv = 1.0 / sqrt(s / (double)d + (double)eps);
        for (long i = 0; i < d; i++) yr[i] = (float)((double)(float)(xr[i] * inv) * (double)scale[i]);
    }
}

void be_rmsnorm_f32(const float *x, float *y, const float *scale, long rows, long d, float eps, int threads) {
    const int par = threads > 1 && rows > 1 && rows * d > 16384;
    rmsnorm_call c_ = {x, scale, y, d, eps};
    be_parallel(par ? threads : 1, rows, rmsnorm_rows, &c_);
}

