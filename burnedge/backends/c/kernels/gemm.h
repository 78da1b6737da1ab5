/* Dense matrix products: a register-blocked float32 GEMM (6x16 micro-kernel) with a fused epilogue.
 *
 * Packed layouts (made once at compile time for constant operands, or at run time into scratch):
 *   A panels: rows in panels of BE_MR; panel p holds A(p*MR + r, k) at [p*MR*K + k*MR + r], zero-padded rows.
 *   B panels: columns in panels of BE_NR; panel q holds B(k, q*NR + c) at [q*NR*K + k*NR + c], zero-padded.
 * The epilogue of every output element (i, j) of a product `acc` is
 *   y = act(alpha * acc + beta0 * add0[i*rs0 + j*cs0] + add1[i*rs1 + j*cs1])
 * where add0 (a bias or Gemm's C) and add1 (a residual) may be NULL and broadcast through zero strides.
 */
#ifndef BURNEDGE_GEMM_H
#define BURNEDGE_GEMM_H

#include "burnedge.h"

#define BE_MR 6
#define BE_NR 16
/* kernels use at most this many threads (their scratch holds one slice per thread) */
#define BE_DENSE_MAX_THREADS 4

typedef struct {
    float alpha, beta0;
    const float *add0;
    long rs0, cs0;
    const float *add1;
    long rs1, cs1;
    int act;
    float p0, p1;
} be_epi;

/* One tile: C(r, c) for r < mr <= MR, c < nr <= NR of A(mr x K) * B(K x NR), then the epilogue at (i0 + r, j0 + c).
 * A(r, k) = a[r*rsa + k*csa] (rows past mr are never read); B(k, c) = b[k*ldb + c] for all NR columns. */
void be_gemm_tile(long K, const float *a, long rsa, long csa, int mr, const float *b, long ldb, int nr, float *c,
                  long ldc, const be_epi *e, long i0, long j0);
void be_gemm_tile_portable(long K, const float *a, long rsa, long csa, int mr, const float *b, long ldb, int nr,
                           float *c, long ldc, const be_epi *e, long i0, long j0);

/* the epilogue of one element, as the tiles apply it */
static inline float be_epi_apply(const be_epi *e, float acc, long i, long j) {
    float y = e->alpha * acc;
    if (e->add0) y += e->beta0 * e->add0[i * e->rs0 + j * e->cs0];
    if (e->add1) y += e->add1[i * e->rs1 + j * e->cs1];
    return be_activate(y, e->act, e->p0, e->p1);
}

/* B(k, j) = b[k*rsb + j*csb] for j0 <= j < j0 + nr, packed as one NR-wide panel (zero columns past nr) */
void be_gemm_pack_b(long K, const float *b, long rsb, long csb, long j0, int nr, float *dst);

/* C(M x N) = epilogue(A * B), C(i, j) at c[i*ldc + j].
 * a_packed: A is in A panels (rsa, csa unused), else A(i, k) = a[i*rsa + k*csa].
 * b_packed: B is in B panels (rsb, csb unused), else B(k, j) = b[k*rsb + j*csb].
 * scratch: be_gemm_scratch(K) floats when B is not packed. */
void be_gemm_f32(long M, long N, long K, const float *a, long rsa, long csa, int a_packed, const float *b, long rsb,
                 long csb, int b_packed, float *c, long ldc, const be_epi *e, float *scratch, int threads);
/* column panels a job keeps in L1 at once (they then meet each A panel in turn), and a thread's scratch slice */
static inline long be_gemm_nb(long K) {
    const long nb = 6144 / (K * BE_NR);
    return nb < 1 ? 1 : (nb > 16 ? 16 : nb);
}
static inline long be_gemm_slice(long K) { return be_gemm_nb(K) * K * BE_NR; }
static inline long be_gemm_scratch(long K) { return (long)BE_DENSE_MAX_THREADS * be_gemm_slice(K) + 64; }

/* vector helpers shared by the dense kernel sources only (not by generated model code) */
#if defined(BE_DENSE_INTERNAL) && defined(__AVX2__) && defined(__FMA__) && !defined(BURNEDGE_PORTABLE)
#include <immintrin.h>
#define BE_DENSE_AVX2 1

/* activations with a vector form (the others go through be_activate per element) */
static inline int be_vec_act(int act) { return act <= BE_ACT_HARD_SWISH; }

static inline __attribute__((always_inline)) __m256 be_act8(__m256 v, int act, float p0, float p1) {
    const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
    switch (act) {
    case BE_ACT_RELU: return _mm256_max_ps(v, zero);
    case BE_ACT_CLIP: return _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(p0)), _mm256_set1_ps(p1));
    case BE_ACT_LEAKY_RELU:
        return _mm256_blendv_ps(_mm256_mul_ps(v, _mm256_set1_ps(p0)), v, _mm256_cmp_ps(v, zero, _CMP_GE_OQ));
    case BE_ACT_HARD_SIGMOID:
        return _mm256_min_ps(one, _mm256_max_ps(zero, _mm256_fmadd_ps(v, _mm256_set1_ps(p0), _mm256_set1_ps(p1))));
    case BE_ACT_HARD_SWISH: {
        __m256 t = _mm256_fmadd_ps(v, _mm256_set1_ps(1.0f / 6.0f), _mm256_set1_ps(0.5f));
        return _mm256_mul_ps(v, _mm256_min_ps(one, _mm256_max_ps(zero, t)));
    }
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

#endif
