/* Internal to the x86 kernel set: the AVX2 vector helpers of the dense float kernels (8-float epilogues and
 * activations), shared by gemm.c and the conv kernels. */
#ifndef BURNEDGE_X86_DENSE_H
#define BURNEDGE_X86_DENSE_H

#include "gemm.h"
#include "x86_math.h"

/* activations with a vector form (the others go through be_activate per element) */
static inline int be_vec_act(int act) { return act <= BE_ACT_GELU; }

static inline __attribute__((always_inline)) __m256 be_act8(__m256 v, int act, float p0, float p1) {
    const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
    switch (act) {
    case BE_ACT_RELU: return _mm256_max_ps(zero, v); /* max/min return the second operand on NaN: NaN passes */
    case BE_ACT_CLIP: return _mm256_min_ps(_mm256_set1_ps(p1), _mm256_max_ps(_mm256_set1_ps(p0), v));
    case BE_ACT_LEAKY_RELU:
        return _mm256_blendv_ps(_mm256_mul_ps(v, _mm256_set1_ps(p0)), v, _mm256_cmp_ps(v, zero, _CMP_GE_OQ));
    case BE_ACT_HARD_SIGMOID:
        return _mm256_min_ps(one, _mm256_max_ps(zero, _mm256_fmadd_ps(v, _mm256_set1_ps(p0), _mm256_set1_ps(p1))));
    case BE_ACT_HARD_SWISH: {
        __m256 t = _mm256_fmadd_ps(v, _mm256_set1_ps(1.0f / 6.0f), _mm256_set1_ps(0.5f));
        return _mm256_mul_ps(v, _mm256_min_ps(one, _mm256_max_ps(zero, t)));
    }
    case BE_ACT_SIGMOID: return be_sigmoid8(v);
    case BE_ACT_TANH: return be_tanh8(v);
    case BE_ACT_GELU: return be_gelu8(v);
    default: return v;
    }
}

/* 8 values of an additive epilogue operand at row i, columns j..j+7 */
static inline __attribute__((always_inline)) __m256 be_add8(const float *base, long rs, long cs, long i, long j) {
    const float *p = base + i * rs + j * cs;
    if (cs == 0) return _mm256_broadcast_ss(p);
    if (cs == 1) return _mm256_loadu_ps(p);
    return _mm256_setr_ps(p[0], p[cs], p[2 * cs], p[3 * cs], p[4 * cs], p[5 * cs], p[6 * cs], p[7 * cs]);
}

/* the first n < 8 values of an additive operand (masked: nothing past them is read) */
static inline __attribute__((always_inline)) __m256 be_add8_mask(const float *base, long rs, long cs, long i, long j,
                                                                 __m256i mask, int n) {
    const float *p = base + i * rs + j * cs;
    if (cs == 0) return _mm256_broadcast_ss(p);
    if (cs == 1) return _mm256_maskload_ps(p, mask);
    float t[8] = {0};
    for (int k = 0; k < n; k++) t[k] = p[k * cs];
    return _mm256_loadu_ps(t);
}

/* lanes < n set */
static inline __attribute__((always_inline)) __m256i be_mask8(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* the epilogue of 8 consecutive elements (i, j..j+7) before the activation */
static inline __attribute__((always_inline)) __m256 be_epi8_pre(__m256 v, const be_epi *e, long i, long j) {
    if (e->alpha != 1.0f) v = _mm256_mul_ps(v, _mm256_set1_ps(e->alpha));
    if (e->add0) v = _mm256_fmadd_ps(_mm256_set1_ps(e->beta0), be_add8(e->add0, e->rs0, e->cs0, i, j), v);
    if (e->add1) v = _mm256_add_ps(v, be_add8(e->add1, e->rs1, e->cs1, i, j));
    return v;
}

/* stores n <= 8 outputs at y[0..n) of elements (i, j..j+n-1) with the whole epilogue */
static inline __attribute__((always_inline)) void be_epi8_store(float *y, __m256 v, const be_epi *e, long i, long j,
                                                                int n) {
    if (n == 8) {
        v = be_epi8_pre(v, e, i, j);
    } else {
        const __m256i mask = be_mask8(n);
        if (e->alpha != 1.0f) v = _mm256_mul_ps(v, _mm256_set1_ps(e->alpha));
        if (e->add0)
            v = _mm256_fmadd_ps(_mm256_set1_ps(e->beta0), be_add8_mask(e->add0, e->rs0, e->cs0, i, j, mask, n), v);
        if (e->add1) v = _mm256_add_ps(v, be_add8_mask(e->add1, e->rs1, e->cs1, i, j, mask, n));
    }
    if (be_vec_act(e->act)) {
        v = be_act8(v, e->act, e->p0, e->p1);
        if (n == 8)
            _mm256_storeu_ps(y, v);
        else
            _mm256_maskstore_ps(y, be_mask8(n), v);
        return;
    }
    float t[8];
    _mm256_storeu_ps(t, v);
    for (int k = 0; k < n; k++) y[k] = be_activate(t[k], e->act, e->p0, e->p1);
}

#endif
