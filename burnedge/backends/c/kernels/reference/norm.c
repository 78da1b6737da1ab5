/* Normalisation kernels: Softmax, LogSoftmax, LayerNorm, GroupNorm/InstanceNorm (BatchNorm's affine and
 * LpNorm: channel_affine.c, lpnorm.c).
 *
 * Softmax of a contiguous row (the common case: the last axis):
 *   1. m = max(row);  2. e = exp(x - m) written to y while summing e;  3. y *= 1 / sum
 *   (LogSoftmax: sum exp(x - m), then y = (x - m) - log(sum)). AVX2 computes exp with a degree-6 polynomial
 *   on x = k ln2 + r, |r| <= ln2 / 2, times 2^k (about 1 ulp; flushes below -87.3 to 0).
 *   A strided axis (inner > 1) walks blocks of lanes row by row with expf.
 * LayerNorm per row: mean = sum / d, var = sum((x - mean)^2) / d, inv = 1 / sqrt(var + eps),
 *   y = (x - mean) * inv * scale + bias: the same operations, in the same order, as the reference (float32).
 * GroupNorm per (batch, group): the same statistics over the group's contiguous channels, scale/bias per channel.
 * Rows (groups, channels) are independent: threads split them; every output is written by one thread.
 */
#include "burnedge.h"
#include "norm.h"
#include "norm_loops.h"

static float be__sum(const float *x, long n, int simd) {
    long i = 0;
    float s = 0.0f;
    (void)simd;
    float acc[8] = {0};
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) acc[k] += x[i + k];
    for (; i < n; i++) acc[0] += x[i];
    return s + (((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])));
}

/* sum of (x - m)^2 */
static float be__sqdev(const float *x, long n, float m, int simd) {
    long i = 0;
    float s = 0.0f;
    (void)simd;
    float acc[8] = {0};
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) acc[k] += (x[i + k] - m) * (x[i + k] - m);
    for (; i < n; i++) acc[0] += (x[i] - m) * (x[i] - m);
    return s + (((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])));
}

static void be__softmax_row(const float *x, float *y, long n, int log_, int simd) {
    long i = 0;
    float m = -INFINITY;
    for (; i < n; i++) m = x[i] > m ? x[i] : m;
    float s = 0.0f;
    i = 0;
    for (; i < n; i++) {
        float e = expf(x[i] - m);
        if (!log_) y[i] = e;
        s += e;
    }
    if (log_) {
        float ls = logf(s);
        for (i = 0; i < n; i++) y[i] = (x[i] - m) - ls;
    } else {
        float inv = 1.0f / s;
        for (i = 0; i < n; i++) y[i] *= inv;
    }
}
