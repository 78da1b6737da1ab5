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
#include "x86_math.h"
#include "norm_loops.h"

static inline float be__hadd8(__m256 v) {
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}

static inline float be__hmax8(__m256 v) {
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
}

static float be__sum(const float *x, long n, int simd) {
    long i = 0;
    float s = 0.0f;
    if (simd && n >= 16) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0;
        for (; i + 16 <= n; i += 16) {
            a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
            a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + 8));
        }
        s = be__hadd8(_mm256_add_ps(a0, a1));
    }
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
    if (simd && n >= 16) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, vm = _mm256_set1_ps(m);
        for (; i + 16 <= n; i += 16) {
            __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(x + i), vm), d1 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 8), vm);
            a0 = _mm256_fmadd_ps(d0, d0, a0);
            a1 = _mm256_fmadd_ps(d1, d1, a1);
        }
        s = be__hadd8(_mm256_add_ps(a0, a1));
    }
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
    if (simd && n >= 8) {
        __m256 vm = _mm256_set1_ps(-INFINITY);
        for (; i + 8 <= n; i += 8) vm = _mm256_max_ps(_mm256_loadu_ps(x + i), vm);
        m = be__hmax8(vm);
    }
    for (; i < n; i++) m = x[i] > m ? x[i] : m;
    float s = 0.0f;
    i = 0;
    if (simd && n >= 8) {
        __m256 vm = _mm256_set1_ps(m), acc = _mm256_setzero_ps();
        for (; i + 8 <= n; i += 8) {
            __m256 e = be_exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
            if (!log_) _mm256_storeu_ps(y + i, e);
            acc = _mm256_add_ps(acc, e);
        }
        s = be__hadd8(acc);
    }
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
