/* RMSNormalization (rmsnorm.h). Per row: ms = sum(x^2) / d accumulated in double (the reference computes its
 * statistics in float64), r = 1 / sqrt(ms + eps), y = (float)(x * r) * scale. Rows are independent: threads
 * split them. */
#include "burnedge.h"
#include "rmsnorm.h"

void be_rmsnorm_f32(const float *x, float *y, const float *scale, long rows, long d, float eps, int threads) {
    BE_PARALLEL_FOR(threads > 1 && rows > 1 && rows * d > 16384)
    for (long r = 0; r < rows; r++) {
        const float *xr = x + r * d;
        float *yr = y + r * d;
        double s = 0.0;
        for (long i = 0; i < d; i++) s += (double)xr[i] * (double)xr[i];
        double inv = 1.0 / sqrt(s / (double)d + (double)eps);
        for (long i = 0; i < d; i++) yr[i] = (float)((double)(float)(xr[i] * inv) * (double)scale[i]);
    }
}
