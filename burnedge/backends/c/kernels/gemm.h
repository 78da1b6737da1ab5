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
#elif defined(BE_DENSE_INTERNAL) && defined(__ARM_NEON) && !defined(BURNEDGE_PORTABLE)
/* ARM NEON (aarch64, and armv7 with -mfpu=neon*): 4-float vectors. aarch64 has 32 q registers, so tiles keep
 * 6 rows x 16 columns (24 accumulators); armv7 has 16, so the same tiles run as 8-column halves. */
#include <arm_neon.h>
#define BE_DENSE_NEON 1
#define BE_AI inline __attribute__((always_inline))
#ifdef __aarch64__
#define BE_NEON_NV 4 /* 4-float vectors per tile row at once */
#else
#define BE_NEON_NV 2
#endif

static inline int be_vec_act(int act) { return act <= BE_ACT_HARD_SWISH; }

/* the NEON tile behind be_gemm_tile (a symbol of its own: the ARM kernel archives show it) */
void be_gemm_tile_neon(long K, const float *a, long rsa, long csa, int mr, const float *b, long ldb, int nr, float *c,
                       long ldc, const be_epi *e, long i0, long j0);

/* acc + a * b: fused where the FPU has it (aarch64, armv7 neon-vfpv4) */
static BE_AI float32x4_t be_fma4(float32x4_t acc, float32x4_t a, float32x4_t b) {
#ifdef __ARM_FEATURE_FMA
    return vfmaq_f32(acc, a, b);
#else
    return vmlaq_f32(acc, a, b);
#endif
}

static BE_AI float32x4_t be_act4(float32x4_t v, int act, float p0, float p1) {
    const float32x4_t zero = vdupq_n_f32(0.0f), one = vdupq_n_f32(1.0f);
    switch (act) {
    case BE_ACT_RELU: return vmaxq_f32(v, zero);
    case BE_ACT_CLIP: return vminq_f32(vmaxq_f32(v, vdupq_n_f32(p0)), vdupq_n_f32(p1));
    case BE_ACT_LEAKY_RELU: return vbslq_f32(vcgeq_f32(v, zero), v, vmulq_n_f32(v, p0));
    case BE_ACT_HARD_SIGMOID:
        return vminq_f32(one, vmaxq_f32(zero, be_fma4(vdupq_n_f32(p1), v, vdupq_n_f32(p0))));
    case BE_ACT_HARD_SWISH: {
        const float32x4_t t = be_fma4(vdupq_n_f32(0.5f), v, vdupq_n_f32(1.0f / 6.0f));
        return vmulq_f32(v, vminq_f32(one, vmaxq_f32(zero, t)));
    }
    default: return v;
    }
}

/* n <= 4 values p[k*cs] (lanes past n are zeros; nothing past them is read) */
static BE_AI float32x4_t be_ld4n(const float *p, long cs, int n) {
    if (cs == 0) return vld1q_dup_f32(p);
    if (cs == 1 && n == 4) return vld1q_f32(p);
    float t[4] = {0};
    for (int k = 0; k < n; k++) t[k] = p[k * cs];
    return vld1q_f32(t);
}

/* stores lanes < n of v at y[0..n) */
static BE_AI void be_st4n(float *y, float32x4_t v, int n) {
    if (n == 4) {
        vst1q_f32(y, v);
        return;
    }
    float t[4];
    vst1q_f32(t, v);
    for (int k = 0; k < n; k++) y[k] = t[k];
}

/* stores n <= 4 outputs at y[0..n) of elements (i, j..j+n-1) with the whole epilogue */
static BE_AI void be_epi4_store(float *y, float32x4_t v, const be_epi *e, long i, long j, int n) {
    if (e->alpha != 1.0f) v = vmulq_n_f32(v, e->alpha);
    if (e->add0) v = be_fma4(v, vdupq_n_f32(e->beta0), be_ld4n(e->add0 + i * e->rs0 + j * e->cs0, e->cs0, n));
    if (e->add1) v = vaddq_f32(v, be_ld4n(e->add1 + i * e->rs1 + j * e->cs1, e->cs1, n));
    if (be_vec_act(e->act)) {
        be_st4n(y, be_act4(v, e->act, e->p0, e->p1), n);
        return;
    }
    float t[4];
    vst1q_f32(t, v);
    for (int k = 0; k < n; k++) y[k] = be_activate(t[k], e->act, e->p0, e->p1);
}

/* The register tile of the NEON GEMM and NHWC conv kernels: for rows r < R (R = 2, 4, 6 or 8) and vectors v < NV
 * (of 4 columns), acc[r*4 + v] = init[v] + sum over k in order of A(r, k) * B(k, 4v..4v+3), one fused
 * multiply-add chain per output. A(r, k) = a[r][o], o = koff[k] (KOFF) or k * ostep; ACONT: a[r] = a[0] + r
 * (packed A panels: one vector load per k, R rows readable). B(k, .) at b + k * ldb.
 * aarch64 gathers the R values of A(., k) into two vectors and multiplies by lane (6x16: 24 accumulators + 4 B +
 * 2 A vectors of the 32 q registers); armv7 (16 q registers, no fused multiply by lane) broadcasts each row and
 * runs at most 4x8 or 2x16 at once (8 accumulators). */
#ifdef __aarch64__
#define BE_NT_MUL(acc, bv, r) vfmaq_laneq_f32(acc, bv, (r) < 4 ? alo : ahi, (r) & 3)
#define BE_NT_ROW(r)                                                                                               \
    do {                                                                                                           \
        if (R > r) {                                                                                               \
            c##r##0 = BE_NT_MUL(c##r##0, b0, r);                                                                   \
            if (NV > 1) c##r##1 = BE_NT_MUL(c##r##1, b1, r);                                                       \
            if (NV > 2) c##r##2 = BE_NT_MUL(c##r##2, b2, r);                                                       \
            if (NV > 3) c##r##3 = BE_NT_MUL(c##r##3, b3, r);                                                       \
        }                                                                                                          \
    } while (0)
#else
#define BE_NT_ROW(r)                                                                                               \
    do {                                                                                                           \
        if (R > r) {                                                                                               \
            const float32x4_t av = vld1q_dup_f32(a##r + o);                                                        \
            c##r##0 = be_fma4(c##r##0, av, b0);                                                                    \
            if (NV > 1) c##r##1 = be_fma4(c##r##1, av, b1);                                                        \
            if (NV > 2) c##r##2 = be_fma4(c##r##2, av, b2);                                                        \
            if (NV > 3) c##r##3 = be_fma4(c##r##3, av, b3);                                                        \
        }                                                                                                          \
    } while (0)
#endif
#define BE_NT_OUT(r)                                                                                               \
    do {                                                                                                           \
        if (R > r) {                                                                                               \
            acc[r * 4] = c##r##0;                                                                                  \
            if (NV > 1) acc[r * 4 + 1] = c##r##1;                                                                  \
            if (NV > 2) acc[r * 4 + 2] = c##r##2;                                                                  \
            if (NV > 3) acc[r * 4 + 3] = c##r##3;                                                                  \
        }                                                                                                          \
    } while (0)

static BE_AI void be_neon_tile(long K, const float *const *a, const int *koff, long ostep, const float *b, long ldb,
                               const float32x4_t *init, float32x4_t *acc, const int R, const int NV,
                               const int KOFF, const int ACONT) {
    const float *a0 = a[0], *a1 = R > 1 ? a[1] : a0, *a2 = R > 2 ? a[2] : a0, *a3 = R > 3 ? a[3] : a0;
    const float *a4 = R > 4 ? a[4] : a0, *a5 = R > 5 ? a[5] : a0, *a6 = R > 6 ? a[6] : a0, *a7 = R > 7 ? a[7] : a0;
    (void)a1, (void)a2, (void)a3, (void)a4, (void)a5, (void)a6, (void)a7;
    float32x4_t c00 = init[0], c01 = init[1], c02 = init[2], c03 = init[3];
    float32x4_t c10 = c00, c11 = c01, c12 = c02, c13 = c03, c20 = c00, c21 = c01, c22 = c02, c23 = c03;
    float32x4_t c30 = c00, c31 = c01, c32 = c02, c33 = c03, c40 = c00, c41 = c01, c42 = c02, c43 = c03;
    float32x4_t c50 = c00, c51 = c01, c52 = c02, c53 = c03, c60 = c00, c61 = c01, c62 = c02, c63 = c03;
    float32x4_t c70 = c00, c71 = c01, c72 = c02, c73 = c03;
    const float *bp = b;
    for (long k = 0; k < K; k++, bp += ldb) {
        const long o = KOFF ? koff[k] : k * ostep;
        const float32x4_t b0 = vld1q_f32(bp), b1 = NV > 1 ? vld1q_f32(bp + 4) : b0;
        const float32x4_t b2 = NV > 2 ? vld1q_f32(bp + 8) : b0, b3 = NV > 3 ? vld1q_f32(bp + 12) : b0;
#ifdef __aarch64__
        const float32x2_t z2 = vdup_n_f32(0.0f);
        float32x4_t alo, ahi = vdupq_n_f32(0.0f);
        if (ACONT) {
            alo = R >= 4 ? vld1q_f32(a0 + o) : vcombine_f32(vld1_f32(a0 + o), z2);
            if (R == 6) ahi = vcombine_f32(vld1_f32(a0 + o + 4), z2);
            if (R == 8) ahi = vld1q_f32(a0 + o + 4);
        } else {
            alo = vld1q_lane_f32(a1 + o, vld1q_dup_f32(a0 + o), 1);
            if (R > 2) alo = vld1q_lane_f32(a3 + o, vld1q_lane_f32(a2 + o, alo, 2), 3);
            if (R > 4) ahi = vld1q_lane_f32(a5 + o, vld1q_dup_f32(a4 + o), 1);
            if (R > 6) ahi = vld1q_lane_f32(a7 + o, vld1q_lane_f32(a6 + o, ahi, 2), 3);
        }
#endif
        BE_NT_ROW(0);
        BE_NT_ROW(1);
        BE_NT_ROW(2);
        BE_NT_ROW(3);
        BE_NT_ROW(4);
        BE_NT_ROW(5);
        BE_NT_ROW(6);
        BE_NT_ROW(7);
    }
    BE_NT_OUT(0);
    BE_NT_OUT(1);
    BE_NT_OUT(2);
    BE_NT_OUT(3);
    BE_NT_OUT(4);
    BE_NT_OUT(5);
    BE_NT_OUT(6);
    BE_NT_OUT(7);
}

/* R = 6 (16 columns) or 8 (8 columns) rows of a B panel: acc[r*4 + v] as be_neon_tile, rows past mr and columns
 * past nr computed or not (never to be stored); armv7 runs it as 4x8 and 2x16 passes */
static BE_AI void be_neon_panel(long K, const float *const *a, const int *koff, long ostep, const float *b, long ldb,
                                const float32x4_t *init, float32x4_t *acc, const int R, int mr, int nr,
                                const int KOFF, const int ACONT) {
#ifdef __aarch64__
    (void)mr, (void)nr;
    be_neon_tile(K, a, koff, ostep, b, ldb, init, acc, R, R == 6 ? 4 : 2, KOFF, ACONT);
#else
    be_neon_tile(K, a, koff, ostep, b, ldb, init, acc, 4, 2, KOFF, 0);
    if (R == 6 && nr > 8) be_neon_tile(K, a, koff, ostep, b + 8, ldb, init + 2, acc + 2, 4, 2, KOFF, 0);
    if (R == 6 && mr > 4) be_neon_tile(K, a + 4, koff, ostep, b, ldb, init, acc + 16, 2, 4, KOFF, 0);
    if (R == 8 && mr > 4) be_neon_tile(K, a + 4, koff, ostep, b, ldb, init, acc + 16, 4, 2, KOFF, 0);
#endif
}
#endif

#if defined(BE_DENSE_AVX2) || defined(BE_DENSE_NEON)
#define BE_DENSE_SIMD 1
#endif

#endif
