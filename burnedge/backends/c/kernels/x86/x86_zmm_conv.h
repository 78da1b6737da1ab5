/* Internal to the x86 kernel set: the AVX-512F NHWC implicit-GEMM tiles of conv_nhwc.c and the Winograd product of
 * conv_wino.c (BE_ISA_X86_AVX512F).
 *
 * A tile is 8 output pixels x 32 channels (two 16-wide weight panels, 16 zmm accumulators) or 8 x 16 (one panel,
 * the odd last one or an NCHW output through the tile buffer); a last row panel of at most 4 (2) pixels computes
 * only 4 (2) rows. Per k: one 16-float load per panel and one broadcast per pixel (folded into the FMA), the pixels at
 * base[r] + koff[k] (MODE 0), base[0] + r*st + koff[k] (MODE 1: a full panel on one output row) or
 * base[0] + r*st + k (MODE 2: a 1x1 conv read in place). Every output is one FMA chain in k order started from the
 * bias in the fast epilogue (act >= 0), as in x86_conv_tile.h. The tiles are kept out of line (zmm_tile), one
 * instance per shape and activation, so the job loops around them stay small. */
#ifndef BURNEDGE_X86_ZMM_CONV_H
#define BURNEDGE_X86_ZMM_CONV_H

#include "conv_tile.h"
#include "x86_zmm.h"

/* the epilogue of row i, n <= 16 columns j.. with the activation known at compile time (act < 0: generic) */
static inline __attribute__((always_inline)) void zrow16(float *c, __m512 v, const be_epi *e, long i, long j, int n,
                                                         const int act) {
    if (n <= 0) return;
    if (act < 0) {
        be_epi16_store(c, v, e, i, j, n);
        return;
    }
    const __mmask16 m = be_mask16(n);
    if (e->add1) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, e->add1 + i * e->rs1 + j));
    _mm512_mask_storeu_ps(c, m, be_act16(v, act, e->p0, e->p1));
}

#define ZT_FMA(r)                                                                                                      \
    do {                                                                                                               \
        const __m512 av = _mm512_set1_ps(a##r[o]);                                                                     \
        s##r##0 = _mm512_fmadd_ps(av, w0, s##r##0);                                                                    \
        if (NP == 2) s##r##1 = _mm512_fmadd_ps(av, w1, s##r##1);                                                       \
    } while (0)

static inline __attribute__((always_inline)) void zmm_tile_t(long K, const int *koff, const float *const *base, int mr,
                                                             const float *b0, const float *b1, int nr, float *c,
                                                             long ldc, const be_epi *e, long i0, long j0, long st,
                                                             const int act, const int MODE, const int NP,
                                                             const int ROWS) {
    const float *a0 = base[0], *a1 = base[mr > 1 ? 1 : 0], *a2 = base[mr > 2 ? 2 : mr - 1];
    const float *a3 = base[mr > 3 ? 3 : mr - 1], *a4 = base[mr > 4 ? 4 : mr - 1], *a5 = base[mr > 5 ? 5 : mr - 1];
    const float *a6 = base[mr > 6 ? 6 : mr - 1], *a7 = base[mr > 7 ? 7 : mr - 1];
    if (MODE) a1 = a0 + st, a2 = a0 + 2 * st, a3 = a0 + 3 * st, a4 = a0 + 4 * st, a5 = a0 + 5 * st;
    if (MODE) a6 = a0 + 6 * st, a7 = a0 + 7 * st;
    const int n0 = nr < 16 ? nr : 16, n1 = nr - n0;
    __m512 s00 = _mm512_setzero_ps(), s01 = s00;
    if (act >= 0 && e->add0) {
        s00 = _mm512_maskz_loadu_ps(be_mask16(n0), e->add0 + j0);
        if (NP == 2) s01 = _mm512_maskz_loadu_ps(be_mask16(n1), e->add0 + j0 + 16);
    }
    __m512 s10 = s00, s11 = s01, s20 = s00, s21 = s01, s30 = s00, s31 = s01;
    __m512 s40 = s00, s41 = s01, s50 = s00, s51 = s01, s60 = s00, s61 = s01, s70 = s00, s71 = s01;
#pragma GCC unroll 2
    for (long k = 0; k < K; k++) {
        const long o = MODE == 2 ? k : koff[k];
        const __m512 w0 = _mm512_loadu_ps(b0 + k * BE_NR), w1 = NP == 2 ? _mm512_loadu_ps(b1 + k * BE_NR) : w0;
        ZT_FMA(0);
        ZT_FMA(1);
        if (ROWS > 2) {
            ZT_FMA(2);
            ZT_FMA(3);
        }
        if (ROWS > 4) {
            ZT_FMA(4);
            ZT_FMA(5);
            ZT_FMA(6);
            ZT_FMA(7);
        }
    }
    const __m512 lo[8] = {s00, s10, s20, s30, s40, s50, s60, s70}, hi[8] = {s01, s11, s21, s31, s41, s51, s61, s71};
    for (int r = 0; r < ROWS; r++)
        if (r < mr) {
            zrow16(c + r * ldc, lo[r], e, i0 + r, j0, n0, act);
            if (NP == 2) zrow16(c + r * ldc + 16, hi[r], e, i0 + r, j0 + 16, n1, act);
        }
}

/* shape: 0 = MODE 0 with 8 rows, 1 = MODE 0 with 4 rows (mr <= 4), 2 = MODE 1, 3 = MODE 2, 4 = MODE 0 with 2 rows
 * (mr <= 2: the last pixel of a 7x7 or 3x3 plane) */
#define ZT_SHAPE0(mr) ((mr) <= 2 ? 4 : (mr) <= 4 ? 1 : 0)
#define ZT_SHAPES(ACT, NP)                                                                                             \
    switch (shape) {                                                                                                   \
    case 0: zmm_tile_t(K, koff, base, mr, b0, b1, nr, c, ldc, e, i0, j0, st, ACT, 0, NP, 8); return;                  \
    case 1: zmm_tile_t(K, koff, base, mr, b0, b1, nr, c, ldc, e, i0, j0, st, ACT, 0, NP, 4); return;                  \
    case 2: zmm_tile_t(K, koff, base, mr, b0, b1, nr, c, ldc, e, i0, j0, st, ACT, 1, NP, 8); return;                  \
    case 4: zmm_tile_t(K, koff, base, mr, b0, b1, nr, c, ldc, e, i0, j0, st, ACT, 0, NP, 2); return;                  \
    default: zmm_tile_t(K, koff, base, mr, b0, b1, nr, c, ldc, e, i0, j0, st, ACT, 2, NP, 8); return;                 \
    }
#define ZT_ACTS(NP)                                                                                                    \
    switch (act) {                                                                                                     \
    case BE_ACT_NONE: ZT_SHAPES(BE_ACT_NONE, NP)                                                                       \
    case BE_ACT_RELU: ZT_SHAPES(BE_ACT_RELU, NP)                                                                       \
    case BE_ACT_CLIP: ZT_SHAPES(BE_ACT_CLIP, NP)                                                                       \
    default: ZT_SHAPES(-1, NP)                                                                                         \
    }

/* one tile: panels b0 (and b1 = the next one when np == 2: nr up to 32 columns), rows r < mr */
static __attribute__((noinline)) void zmm_tile(long K, const int *koff, const float *const *base, int mr,
                                               const float *b0, const float *b1, int nr, float *c, long ldc,
                                               const be_epi *e, long i0, long j0, long st, int act, int shape,
                                               int np) {
    if (np == 2) {
        ZT_ACTS(2)
    } else {
        ZT_ACTS(1)
    }
}

/* ---- the Winograd product of conv_wino.c ------------------------------------------------------------------
 * 6 patches (row r at a + r*C, k < C) times one 16-wide panel b (k at b + k*16) into m (row r at m + r*16): 6 zmm
 * accumulators, the rows addressed from two pointers and C (base + index * scale), one FMA chain per output in k
 * order. Out of line: one copy for the 16 products of every panel. */
static __attribute__((noinline)) void wino_rows(long C, const float *a, const float *b, float *m) {
    const float *q0 = a, *q1 = a + 3 * C; /* rows 0-2 at q0, q0 + C, q0 + 2C; rows 3-5 at q1 likewise */
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0;
    for (long k = 0; k < C; k++, q0++, q1++) {
        const __m512 w = _mm512_loadu_ps(b + k * BE_NR);
        s0 = _mm512_fmadd_ps(_mm512_set1_ps(q0[0]), w, s0);
        s1 = _mm512_fmadd_ps(_mm512_set1_ps(q0[C]), w, s1);
        s2 = _mm512_fmadd_ps(_mm512_set1_ps(q0[2 * C]), w, s2);
        s3 = _mm512_fmadd_ps(_mm512_set1_ps(q1[0]), w, s3);
        s4 = _mm512_fmadd_ps(_mm512_set1_ps(q1[C]), w, s4);
        s5 = _mm512_fmadd_ps(_mm512_set1_ps(q1[2 * C]), w, s5);
    }
    _mm512_storeu_ps(m, s0);
    _mm512_storeu_ps(m + BE_NR, s1);
    _mm512_storeu_ps(m + 2 * BE_NR, s2);
    _mm512_storeu_ps(m + 3 * BE_NR, s3);
    _mm512_storeu_ps(m + 4 * BE_NR, s4);
    _mm512_storeu_ps(m + 5 * BE_NR, s5);
}

/* wino_rows for two adjacent 16-wide panels at once (b0, b1 = b0 + 16 C, into m0 and m1): 12 accumulators, two
 * weight loads and six broadcasts per k, enough independent FMA chains to cover their latency (six do not). */
static __attribute__((noinline)) void wino_rows2(long C, const float *a, const float *b0, float *m0, float *m1) {
    const float *q0 = a, *q1 = a + 3 * C, *b1 = b0 + BE_NR * C;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0;
    __m512 t0 = s0, t1 = s0, t2 = s0, t3 = s0, t4 = s0, t5 = s0;
    for (long k = 0; k < C; k++, q0++, q1++) {
        const __m512 w = _mm512_loadu_ps(b0 + k * BE_NR), v = _mm512_loadu_ps(b1 + k * BE_NR);
        __m512 x = _mm512_set1_ps(q0[0]);
        s0 = _mm512_fmadd_ps(x, w, s0), t0 = _mm512_fmadd_ps(x, v, t0);
        x = _mm512_set1_ps(q0[C]);
        s1 = _mm512_fmadd_ps(x, w, s1), t1 = _mm512_fmadd_ps(x, v, t1);
        x = _mm512_set1_ps(q0[2 * C]);
        s2 = _mm512_fmadd_ps(x, w, s2), t2 = _mm512_fmadd_ps(x, v, t2);
        x = _mm512_set1_ps(q1[0]);
        s3 = _mm512_fmadd_ps(x, w, s3), t3 = _mm512_fmadd_ps(x, v, t3);
        x = _mm512_set1_ps(q1[C]);
        s4 = _mm512_fmadd_ps(x, w, s4), t4 = _mm512_fmadd_ps(x, v, t4);
        x = _mm512_set1_ps(q1[2 * C]);
        s5 = _mm512_fmadd_ps(x, w, s5), t5 = _mm512_fmadd_ps(x, v, t5);
    }
    const __m512 s[6] = {s0, s1, s2, s3, s4, s5}, t[6] = {t0, t1, t2, t3, t4, t5};
    for (int r = 0; r < 6; r++) _mm512_storeu_ps(m0 + r * BE_NR, s[r]), _mm512_storeu_ps(m1 + r * BE_NR, t[r]);
}

#endif
