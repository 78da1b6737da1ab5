/* Internal to the x86 kernel set: the AVX-512F side of the float kernels (BE_ISA_X86_AVX512F: host builds on
 * AVX-512 CPUs, x86-64-v4; never x86-64-v3). This header: the 16-lane epilogue (alpha, the additive operands, the
 * activations of x86_dense.h's be_act8, a __mmask16 for the tails) and the GEMM's two-panel tile (6 rows x 32
 * columns); x86_zmm_conv.h: the NHWC conv tiles; x86_zmm_dw.h: channels-last depthwise on 16 channels.
 * Sums are formed as in the AVX2 tiles (one fused multiply-add chain per output, k in order), so the zmm and ymm
 * paths agree to the last bit wherever both use FMA in the same order. */
#ifndef BURNEDGE_X86_ZMM_H
#define BURNEDGE_X86_ZMM_H

#include "x86_dense.h"

#ifndef BE_ISA_X86_AVX512F
#error "x86_zmm.h needs AVX-512 F/BW/VL/DQ (-march=x86-64-v4 or an AVX-512 -march=native)"
#endif

/* lanes < n set (n <= 16) */
static inline __attribute__((always_inline)) __mmask16 be_mask16(int n) {
    return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u);
}

/* x86_math.h's exp, sigmoid, tanh and erf-GELU on 16 lanes: the same steps (the exponent put in by scalef), so
 * the same values as the 8-lane forms; measured 25% faster than running those on the two halves */
static inline __m512 be_exp16(__m512 x) {
    const __m512 lo = _mm512_set1_ps(-87.33654f);
    const __mmask16 tiny = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ);
    x = _mm512_max_ps(lo, _mm512_min_ps(_mm512_set1_ps(88.0f), x)); /* second operand: NaN passes */
    const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(k, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.0f / 720.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_maskz_mov_ps((__mmask16)~tiny, _mm512_scalef_ps(p, k));
}

static inline __m512 be_sigmoid16(__m512 x) {
    const __m512 one = _mm512_set1_ps(1.0f);
    return _mm512_div_ps(one, _mm512_add_ps(one, be_exp16(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

static inline __m512 be_tanh16(__m512 x) {
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512i sign = _mm512_set1_epi32((int)0x80000000u);
    const __m512 e = be_exp16(_mm512_mul_ps(_mm512_set1_ps(-2.0f), _mm512_abs_ps(x)));
    const __m512 t = _mm512_div_ps(_mm512_sub_ps(one, e), _mm512_add_ps(one, e));
    return _mm512_castsi512_ps(
        _mm512_or_si512(_mm512_castps_si512(t), _mm512_and_si512(sign, _mm512_castps_si512(x))));
}

static inline __m512 be_gelu16(__m512 x) {
    static const float c[10] = {0.17087277f,  -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f,
                                -0.18628806f, 0.09678418f,  0.37409196f, 1.00002368f,  -1.26551223f};
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 z = _mm512_mul_ps(x, _mm512_set1_ps(0.70710678118654752f)), a = _mm512_abs_ps(z);
    const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(_mm512_set1_ps(0.5f), a, one));
    __m512 p = _mm512_set1_ps(c[0]);
    for (int k = 1; k < 10; k++) p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(c[k]));
    const __m512 q = _mm512_mul_ps(t, be_exp16(_mm512_fnmadd_ps(a, a, p))); /* erfc(|z|) */
    const __mmask16 neg = _mm512_cmp_ps_mask(z, _mm512_setzero_ps(), _CMP_LT_OQ);
    const __m512 onep = _mm512_mask_blend_ps(neg, _mm512_sub_ps(_mm512_set1_ps(2.0f), q), q); /* 1 + erf(z) */
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x), onep);
}

static inline __attribute__((always_inline)) __m512 be_act16(__m512 v, int act, float p0, float p1) {
    const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
    switch (act) {
    case BE_ACT_RELU: return _mm512_max_ps(zero, v); /* the second operand on NaN, as be_act8: NaN passes */
    case BE_ACT_CLIP: return _mm512_min_ps(_mm512_set1_ps(p1), _mm512_max_ps(_mm512_set1_ps(p0), v));
    case BE_ACT_LEAKY_RELU:
        return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, zero, _CMP_GE_OQ), _mm512_mul_ps(v, _mm512_set1_ps(p0)), v);
    case BE_ACT_HARD_SIGMOID:
        return _mm512_min_ps(one, _mm512_max_ps(zero, _mm512_fmadd_ps(v, _mm512_set1_ps(p0), _mm512_set1_ps(p1))));
    case BE_ACT_HARD_SWISH: {
        __m512 t = _mm512_fmadd_ps(v, _mm512_set1_ps(1.0f / 6.0f), _mm512_set1_ps(0.5f));
        return _mm512_mul_ps(v, _mm512_min_ps(one, _mm512_max_ps(zero, t)));
    }
    case BE_ACT_SIGMOID: return be_sigmoid16(v);
    case BE_ACT_TANH: return be_tanh16(v);
    case BE_ACT_GELU: return be_gelu16(v);
    default: return v;
    }
}

/* the first n <= 16 values of an additive epilogue operand at row i, columns j..; nothing past them is read */
static inline __attribute__((always_inline)) __m512 be_add16(const float *base, long rs, long cs, long i, long j,
                                                             __mmask16 m, int n) {
    const float *p = base + i * rs + j * cs;
    if (cs == 0) return _mm512_set1_ps(*p);
    if (cs == 1) return _mm512_maskz_loadu_ps(m, p);
    float t[16] = {0};
    for (int k = 0; k < n; k++) t[k] = p[k * cs];
    return _mm512_loadu_ps(t);
}

/* stores n <= 16 outputs at y[0..n) of elements (i, j..j+n-1) with the whole epilogue */
static inline __attribute__((always_inline)) void be_epi16_store(float *y, __m512 v, const be_epi *e, long i, long j,
                                                                 int n) {
    const __mmask16 m = be_mask16(n);
    if (e->alpha != 1.0f) v = _mm512_mul_ps(v, _mm512_set1_ps(e->alpha));
    if (e->add0) v = _mm512_fmadd_ps(_mm512_set1_ps(e->beta0), be_add16(e->add0, e->rs0, e->cs0, i, j, m, n), v);
    if (e->add1) v = _mm512_add_ps(v, be_add16(e->add1, e->rs1, e->cs1, i, j, m, n));
    if (be_vec_act(e->act)) {
        _mm512_mask_storeu_ps(y, m, be_act16(v, e->act, e->p0, e->p1));
        return;
    }
    float t[16];
    _mm512_storeu_ps(t, v);
    for (int k = 0; k < n; k++) y[k] = be_activate(t[k], e->act, e->p0, e->p1);
}

/* ---- GEMM: two B panels at once ------------------------------------------------------------------------------
 * Rows i0.. (mr of them, at a + r*rsa, k at k*csa) times the panels b0 (columns j0..j0+15, k at k*ldb0) and b1
 * (columns j0+16.., nr - 16 of them): 12 zmm accumulators (6 with at most 3 rows), per k one broadcast per row
 * (folded into the FMA) and two 16-float loads. gemm_loops.h calls it for every pair of panels (BE_GEMM_TILE2);
 * one row goes through the AVX2 tile, panel by panel (its four partial sums hide the FMA latency). */
#define BE_GEMM_TILE2 1

static inline __attribute__((always_inline)) void gemm_tile2_t(long K, const float *a, long rsa, long csa, int mr,
                                                               const float *b0, long ldb0, const float *b1, long ldb1,
                                                               int nr, float *c, long ldc, const be_epi *e, long i0,
                                                               long j0, const int ROWS) {
    /* rows past mr re-read the last row: their results are dropped; ROWS 3: a panel of at most 3 rows (the last
     * of M = 32: 5 x 6 + 2) computes 3, at half the cost */
    const long o1 = rsa, o2 = (mr > 2 ? 2 : mr - 1) * rsa, o3 = (mr > 3 ? 3 : mr - 1) * rsa;
    const long o4 = (mr > 4 ? 4 : mr - 1) * rsa, o5 = (mr > 5 ? 5 : mr - 1) * rsa;
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m512 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    const float *ap = a, *p0 = b0, *p1 = b1;
#pragma GCC unroll 2
    for (long k = 0; k < K; k++) {
        const __m512 v0 = _mm512_loadu_ps(p0), v1 = _mm512_loadu_ps(p1);
        __m512 av = _mm512_set1_ps(ap[0]);
        c00 = _mm512_fmadd_ps(av, v0, c00);
        c01 = _mm512_fmadd_ps(av, v1, c01);
        av = _mm512_set1_ps(ap[o1]);
        c10 = _mm512_fmadd_ps(av, v0, c10);
        c11 = _mm512_fmadd_ps(av, v1, c11);
        av = _mm512_set1_ps(ap[o2]);
        c20 = _mm512_fmadd_ps(av, v0, c20);
        c21 = _mm512_fmadd_ps(av, v1, c21);
        if (ROWS > 3) {
            av = _mm512_set1_ps(ap[o3]);
            c30 = _mm512_fmadd_ps(av, v0, c30);
            c31 = _mm512_fmadd_ps(av, v1, c31);
            av = _mm512_set1_ps(ap[o4]);
            c40 = _mm512_fmadd_ps(av, v0, c40);
            c41 = _mm512_fmadd_ps(av, v1, c41);
            av = _mm512_set1_ps(ap[o5]);
            c50 = _mm512_fmadd_ps(av, v0, c50);
            c51 = _mm512_fmadd_ps(av, v1, c51);
        }
        ap += csa, p0 += ldb0, p1 += ldb1;
    }
    const __m512 acc[6][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    for (int r = 0; r < ROWS; r++)
        if (r < mr) {
            be_epi16_store(c + r * ldc, acc[r][0], e, i0 + r, j0, 16);
            be_epi16_store(c + r * ldc + 16, acc[r][1], e, i0 + r, j0 + 16, nr - 16);
        }
}

static void be_gemm_tile2(long K, const float *a, long rsa, long csa, int mr, const float *b0, long ldb0,
                          const float *b1, long ldb1, int nr, float *c, long ldc, const be_epi *e, long i0, long j0) {
    if (mr == 1) {
        be_gemm_tile(K, a, rsa, csa, 1, b0, ldb0, 16, c, ldc, e, i0, j0);
        be_gemm_tile(K, a, rsa, csa, 1, b1, ldb1, nr - 16, c + 16, ldc, e, i0, j0 + 16);
    } else if (mr <= 3) {
        gemm_tile2_t(K, a, rsa, csa, mr, b0, ldb0, b1, ldb1, nr, c, ldc, e, i0, j0, 3);
    } else {
        gemm_tile2_t(K, a, rsa, csa, mr, b0, ldb0, b1, ldb1, nr, c, ldc, e, i0, j0, 6);
    }
}

#endif
