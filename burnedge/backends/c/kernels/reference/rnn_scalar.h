/* Internal to the kernel sets: the portable pieces every set's rnn.c defines first (reference/rnn.c has the
 * algorithm): the portable GEMM and the scalar gate functions. */
#ifndef BURNEDGE_RNN_SCALAR_H
#define BURNEDGE_RNN_SCALAR_H

#include "burnedge.h"
#include "rnn.h"

void be_rnn_gemm_acc_portable(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                              int64_t ldb, float *C, int64_t ldc) {
    for (int64_t i = 0; i < M; i++) {
        float *restrict c = C + i * ldc;
        for (int64_t k = 0; k < K; k++) {
            const float a = A[i * lda + k];
            const float *restrict b = B + k * ldb;
            for (int64_t n = 0; n < N; n++) c[n] += a * b[n];
        }
    }
}

/* exp(-a) for a >= 0 without libm, so that gate loops vectorise: a = n ln2 + r with |r| <= ln2 / 2, e^r by
 * its Taylor series to r^7 (error < 1e-8), 2^-n by building the float's exponent. Results below ~1e-38 become
 * that bound, which no caller can tell from 0. */
static inline float exp_neg(float a) {
    a = a < 87.0f ? a : 87.0f;
    const float n = floorf(a * 1.44269504f + 0.5f);
    const float r = (n * 0.693359375f - a) + n * -2.12194440e-4f; /* -(a - n ln2), ln2 split in two */
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const int32_t bits = (127 - (int32_t)n) << 23;
    float scale;
    memcpy(&scale, &bits, 4);
    return p * scale;
}

/* sigmoid as the reference writes it: e = exp(-|x|), 1 / (1 + e) or e / (1 + e) */
static inline float sigmoid1(float x) {
    const float e = exp_neg(fabsf(x));
    return (x >= 0.0f ? 1.0f : e) / (1.0f + e);
}

/* tanh: an odd Taylor polynomial for |x| < 0.3, else (1 - e) / (1 + e) with e = exp(-2|x|) */
static inline float tanh1(float x) {
    const float a = fabsf(x), z = x * x;
    float p = -1382.0f / 155925.0f;
    p = p * z + 62.0f / 2835.0f;
    p = p * z + -17.0f / 315.0f;
    p = p * z + 2.0f / 15.0f;
    p = p * z + -1.0f / 3.0f;
    const float small = x + x * (z * p);
    const float e = exp_neg(2.0f * a);
    const float big = (1.0f - e) / (1.0f + e);
    return a < 0.3f ? small : (x < 0.0f ? -big : big);
}

#endif
