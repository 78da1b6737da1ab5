/* Pooling kernels: MaxPool, AveragePool (NCHW, 1D as one row), GlobalAveragePool, GlobalMaxPool.
 *
 * Windowed pools, per plane and output row (separable, "vertical first"):
 *   1. the kernel rows of this output row that fall inside the input are reduced (max or sum) column by column
 *      into a row buffer that also holds the left/right padding (-inf / lowest for max, 0 for sums);
 *   2. each output of the row reduces kernel-width taps of that buffer: stride 1 walks it contiguously (the
 *      compiler vectorises it), stride 2 deinterleaves even columns with AVX2, other strides are scalar;
 *   3. averages divide by the count of taps inside the counting region (rows times columns: it is a box).
 * Rows wider than the buffer take a direct path that visits the valid taps of each window.
 * Planes are independent: threads split them, each output written by one thread.
 * Global pools reduce each plane with 8 (AVX2: 32) independent accumulators.
 */
#include "burnedge.h"
#include "pool.h"
#include "x86_simd.h"
#include "pool_loops.h"

/* p[0], p[2], ..., p[14] */
static inline __m256 be__even8(const float *p) {
    __m256 e = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), 0x88);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
}

/* float horizontal step with the AVX2 stride-2 path; `sum` picks add over max */
static void be__horiz_f32(const float *buf, float *y, int ow, int kw, int sw, int dw, int sum, int simd) {
    if (simd && sw == 2) {
        int o = 0;
        for (; o + 8 <= ow; o += 8) {
            const float *b = buf + 2 * o;
            __m256 m = be__even8(b);
            for (int k = 1; k < kw; k++)
                m = sum ? _mm256_add_ps(m, be__even8(b + k * dw)) : _mm256_max_ps(be__even8(b + k * dw), m);
            _mm256_storeu_ps(y + o, m);
        }
        if (o < ow) (sum ? be__hsum_f32 : be__hmax_f32)(buf + 2 * o, y + o, ow - o, kw, sw, dw);
        return;
    }
    (void)simd;
    (sum ? be__hsum_f32 : be__hmax_f32)(buf, y, ow, kw, sw, dw);
}

static float be__plane_sum(const float *x, long n, int simd) {
    long i = 0;
    float s = 0.0f;
    if (simd && n >= 8) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (; i + 32 <= n; i += 32) {
            a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
            a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + 8));
            a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + i + 16));
            a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + i + 24));
        }
        for (; i + 8 <= n; i += 8) a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
        __m256 t = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
        __m128 h = _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
        h = _mm_add_ps(h, _mm_movehl_ps(h, h));
        h = _mm_add_ss(h, _mm_movehdup_ps(h));
        s = _mm_cvtss_f32(h);
    }
    (void)simd;
    float acc[8] = {0};
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) acc[k] += x[i + k];
    for (; i < n; i++) acc[0] += x[i];
    return s + ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

static float be__plane_max(const float *x, long n, int simd) {
    long i = 0;
    float m = -INFINITY;
    if (simd && n >= 8) {
        __m256 a0 = _mm256_set1_ps(-INFINITY), a1 = a0;
        for (; i + 16 <= n; i += 16) {
            a0 = _mm256_max_ps(_mm256_loadu_ps(x + i), a0);
            a1 = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), a1);
        }
        for (; i + 8 <= n; i += 8) a0 = _mm256_max_ps(_mm256_loadu_ps(x + i), a0);
        __m256 t = _mm256_max_ps(a0, a1);
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_movehdup_ps(h));
        m = _mm_cvtss_f32(h);
    }
    (void)simd;
    for (; i < n; i++) m = BE_MAX(x[i], m);
    return m;
}
