/* Internal to the x86 kernel set: AVX2 forms of the transcendental functions the float kernels need (softmax's
 * exp, the sigmoid, tanh and erf-GELU epilogues), each within a few 1e-7 (relative) of libm's. */
#ifndef BURNEDGE_X86_MATH_H
#define BURNEDGE_X86_MATH_H

#include "x86_simd.h"

/* exp(x) for x <= 88; NaN stays NaN; 0 below -87.3 */
static inline __m256 be_exp8(__m256 x) {
    const __m256 lo = _mm256_set1_ps(-87.33654f);
    __m256 tiny = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
    x = _mm256_max_ps(lo, _mm256_min_ps(_mm256_set1_ps(88.0f), x)); /* second operand: NaN passes */
    __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 720.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
    return _mm256_andnot_ps(tiny, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

/* 1 / (1 + exp(-x)); NaN stays NaN */
static inline __m256 be_sigmoid8(__m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f);
    return _mm256_div_ps(one, _mm256_add_ps(one, be_exp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

/* tanh(x) = sign(x) (1 - e) / (1 + e), e = exp(-2|x|); NaN stays NaN */
static inline __m256 be_tanh8(__m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
    const __m256 e = be_exp8(_mm256_mul_ps(_mm256_set1_ps(-2.0f), _mm256_andnot_ps(sign, x)));
    const __m256 t = _mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e));
    return _mm256_or_ps(t, _mm256_and_ps(sign, x));
}

/* erfc(a) for a >= 0: t exp(-a^2 + P(t)), t = 1 / (1 + a / 2), P of degree 9 (the Chebyshev fit of Numerical
 * Recipes' erfcc: relative error below 1.2e-7 everywhere), so 1 + erf(x) = erfc(-x) keeps its precision for
 * negative x instead of cancelling */
static inline __m256 be_erfc8_pos(__m256 a) {
    static const float c[10] = {0.17087277f,  -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f,
                                -0.18628806f, 0.09678418f,  0.37409196f, 1.00002368f,  -1.26551223f};
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(_mm256_set1_ps(0.5f), a, one));
    __m256 p = _mm256_set1_ps(c[0]);
    for (int k = 1; k < 10; k++) p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(c[k]));
    return _mm256_mul_ps(t, be_exp8(_mm256_fnmadd_ps(a, a, p)));
}

/* GELU 0.5 x (1 + erf(x / sqrt 2)); NaN stays NaN */
static inline __m256 be_gelu8(__m256 x) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 z = _mm256_mul_ps(x, _mm256_set1_ps(0.70710678118654752f));
    const __m256 q = be_erfc8_pos(_mm256_andnot_ps(sign, z)); /* erfc(|z|) */
    const __m256 neg = _mm256_cmp_ps(z, _mm256_setzero_ps(), _CMP_LT_OQ);
    const __m256 onep = _mm256_blendv_ps(_mm256_sub_ps(_mm256_set1_ps(2.0f), q), q, neg); /* 1 + erf(z) */
    return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), onep);
}

#endif
