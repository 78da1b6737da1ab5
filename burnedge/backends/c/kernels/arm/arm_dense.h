/* Internal to the ARM kernel set: the NEON vector helpers of the dense float kernels, shared by gemm.c and the
 * conv kernels.
 * ARM NEON (aarch64, and armv7 with -mfpu=neon*): 4-float vectors. aarch64 has 32 q registers, so tiles keep
 * 6 rows x 16 columns (24 accumulators); armv7 has 16, so the same tiles run as 8-column halves. */
#ifndef BURNEDGE_ARM_DENSE_H
#define BURNEDGE_ARM_DENSE_H

#include "arm_simd.h"
#include "gemm.h"
#ifdef BE_ISA_AARCH64
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
#ifdef BE_ISA_NEON_FMA
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
#ifdef BE_ISA_AARCH64
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
#ifdef BE_ISA_AARCH64
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
#ifdef BE_ISA_AARCH64
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
