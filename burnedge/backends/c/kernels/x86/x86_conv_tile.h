/* Internal to the x86 kernel set: the AVX2 NHWC implicit-GEMM tiles of conv_nhwc.c and conv_wino.c (6 pixels x
 * 16 channels, the epilogue fused; see conv_tile.h). */
#ifndef BURNEDGE_X86_CONV_TILE_H
#define BURNEDGE_X86_CONV_TILE_H

#include "conv_tile.h"
#include "x86_dense.h"

/* the epilogue of row i, columns j0.. (nr of them) with the activation known at compile time (act < 0: generic);
 * in the fast path the accumulators started from the bias */
static inline __attribute__((always_inline)) void store_row(float *c, __m256 v0, __m256 v1, const be_epi *e, long i,
                                                            long j0, int nr, const int act) {
    if (act < 0) {
        be_epi8_store(c, v0, e, i, j0, nr < 8 ? nr : 8);
        if (nr > 8) be_epi8_store(c + 8, v1, e, i, j0 + 8, nr - 8);
        return;
    }
    if (e->add1) {
        const float *res = e->add1 + i * e->rs1 + j0;
        if (nr >= 16) {
            v0 = _mm256_add_ps(v0, _mm256_loadu_ps(res));
            v1 = _mm256_add_ps(v1, _mm256_loadu_ps(res + 8));
        } else {
            v0 = _mm256_add_ps(v0, be_add8_mask(res, 0, 1, 0, 0, be_mask8(nr < 8 ? nr : 8), nr < 8 ? nr : 8));
            if (nr > 8) v1 = _mm256_add_ps(v1, be_add8_mask(res + 8, 0, 1, 0, 0, be_mask8(nr - 8), nr - 8));
        }
    }
    v0 = be_act8(v0, act, e->p0, e->p1);
    v1 = be_act8(v1, act, e->p0, e->p1);
    if (nr >= 16) {
        _mm256_storeu_ps(c, v0);
        _mm256_storeu_ps(c + 8, v1);
    } else if (nr >= 8) {
        _mm256_storeu_ps(c, v0);
        if (nr > 8) _mm256_maskstore_ps(c + 8, be_mask8(nr - 8), v1);
    } else {
        _mm256_maskstore_ps(c, be_mask8(nr), v0);
    }
}

/* the bias of columns j0.. (nr of them) as two vectors: the accumulators' start in the fast path, else zeros */
static inline __attribute__((always_inline)) void bias16(const be_epi *e, long j0, int nr, const int act, __m256 *b0,
                                                         __m256 *b1) {
    *b0 = *b1 = _mm256_setzero_ps();
    if (act < 0 || !e->add0) return;
    *b0 = nr >= 8 ? _mm256_loadu_ps(e->add0 + j0) : be_add8_mask(e->add0, 0, 1, 0, j0, be_mask8(nr), nr);
    if (nr >= 16)
        *b1 = _mm256_loadu_ps(e->add0 + j0 + 8);
    else if (nr > 8)
        *b1 = be_add8_mask(e->add0, 0, 1, 0, j0 + 8, be_mask8(nr - 8), nr - 8);
}

static inline __attribute__((always_inline)) void tile_avx2(long K, const int *koff, const float *const *base, int mr,
                                                            const float *b, int nr, float *c, long ldc,
                                                            const be_epi *e, long i0, long j0, const int act,
                                                            long st, const int MODE, const int ROWS) {
    /* rows past mr re-read the last row: their results are dropped. MODE 1: rows at base[0] + r*st (a full panel
     * on one output row: fewer registers), MODE 2: that and koff the identity (1x1 convs read in place). ROWS 3:
     * a last panel of at most 3 pixels (a 3x3 plane's second panel) computes only rows 0-2, at half the cost */
    const float *a0 = base[0], *a1 = base[mr > 1 ? 1 : 0], *a2 = base[mr > 2 ? 2 : mr - 1];
    const float *a3 = base[mr > 3 ? 3 : mr - 1], *a4 = base[mr > 4 ? 4 : mr - 1], *a5 = base[mr > 5 ? 5 : mr - 1];
    if (MODE) a1 = a0 + st, a2 = a0 + 2 * st, a3 = a0 + 3 * st, a4 = a0 + 4 * st, a5 = a0 + 5 * st;
    __m256 c00, c01;
    bias16(e, j0, nr, act, &c00, &c01);
    __m256 c10 = c00, c11 = c01, c20 = c00, c21 = c01, c30 = c00, c31 = c01, c40 = c00, c41 = c01, c50 = c00, c51 = c01;
#pragma GCC unroll 4
    for (long k = 0; k < K; k++) {
        const long o = MODE == 2 ? k : koff[k];
        const __m256 b0 = _mm256_loadu_ps(b + k * BE_NR), b1 = _mm256_loadu_ps(b + k * BE_NR + 8);
        __m256 av = _mm256_broadcast_ss(a0 + o);
        c00 = _mm256_fmadd_ps(av, b0, c00);
        c01 = _mm256_fmadd_ps(av, b1, c01);
        av = _mm256_broadcast_ss(a1 + o);
        c10 = _mm256_fmadd_ps(av, b0, c10);
        c11 = _mm256_fmadd_ps(av, b1, c11);
        av = _mm256_broadcast_ss(a2 + o);
        c20 = _mm256_fmadd_ps(av, b0, c20);
        c21 = _mm256_fmadd_ps(av, b1, c21);
        if (ROWS > 3) {
            av = _mm256_broadcast_ss(a3 + o);
            c30 = _mm256_fmadd_ps(av, b0, c30);
            c31 = _mm256_fmadd_ps(av, b1, c31);
            av = _mm256_broadcast_ss(a4 + o);
            c40 = _mm256_fmadd_ps(av, b0, c40);
            c41 = _mm256_fmadd_ps(av, b1, c41);
            av = _mm256_broadcast_ss(a5 + o);
            c50 = _mm256_fmadd_ps(av, b0, c50);
            c51 = _mm256_fmadd_ps(av, b1, c51);
        }
    }
    store_row(c, c00, c01, e, i0, j0, nr, act);
    if (mr > 1) store_row(c + ldc, c10, c11, e, i0 + 1, j0, nr, act);
    if (mr > 2) store_row(c + 2 * ldc, c20, c21, e, i0 + 2, j0, nr, act);
    if (ROWS > 3 && mr > 3) store_row(c + 3 * ldc, c30, c31, e, i0 + 3, j0, nr, act);
    if (ROWS > 3 && mr > 4) store_row(c + 4 * ldc, c40, c41, e, i0 + 4, j0, nr, act);
    if (ROWS > 3 && mr > 5) store_row(c + 5 * ldc, c50, c51, e, i0 + 5, j0, nr, act);
}

/* 8 rows x 8 columns (one vector), for convs with at most 8 output channels: no half-empty 16-wide panels */
static inline __attribute__((always_inline)) void tile8_avx2(long K, const int *koff, const float *const *base, int mr,
                                                             const float *b, int nr, float *c, long ldc,
                                                             const be_epi *e, long i0, long j0, const int act,
                                                             long st, const int MODE) {
    const float *a0 = base[0], *a1 = base[mr > 1 ? 1 : 0], *a2 = base[mr > 2 ? 2 : mr - 1];
    const float *a3 = base[mr > 3 ? 3 : mr - 1], *a4 = base[mr > 4 ? 4 : mr - 1], *a5 = base[mr > 5 ? 5 : mr - 1];
    const float *a6 = base[mr > 6 ? 6 : mr - 1], *a7 = base[mr > 7 ? 7 : mr - 1];
    if (MODE) a1 = a0 + st, a2 = a0 + 2 * st, a3 = a0 + 3 * st, a4 = a0 + 4 * st, a5 = a0 + 5 * st;
    if (MODE) a6 = a0 + 6 * st, a7 = a0 + 7 * st;
    __m256 c0, hi; /* hi: the bias of columns 8.., unused (nr <= 8) */
    bias16(e, j0, nr, act, &c0, &hi);
    __m256 c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    for (long k = 0; k < K; k++) {
        const long o = MODE == 2 ? k : koff[k];
        const __m256 bk = _mm256_loadu_ps(b + k * BE_NR);
        c0 = _mm256_fmadd_ps(_mm256_broadcast_ss(a0 + o), bk, c0);
        c1 = _mm256_fmadd_ps(_mm256_broadcast_ss(a1 + o), bk, c1);
        c2 = _mm256_fmadd_ps(_mm256_broadcast_ss(a2 + o), bk, c2);
        c3 = _mm256_fmadd_ps(_mm256_broadcast_ss(a3 + o), bk, c3);
        c4 = _mm256_fmadd_ps(_mm256_broadcast_ss(a4 + o), bk, c4);
        c5 = _mm256_fmadd_ps(_mm256_broadcast_ss(a5 + o), bk, c5);
        c6 = _mm256_fmadd_ps(_mm256_broadcast_ss(a6 + o), bk, c6);
        c7 = _mm256_fmadd_ps(_mm256_broadcast_ss(a7 + o), bk, c7);
    }
    const __m256 acc[8] = {c0, c1, c2, c3, c4, c5, c6, c7};
    for (int r = 0; r < 8; r++)
        if (r < mr) store_row(c + r * ldc, acc[r], hi, e, i0 + r, j0, nr, act);
}

#endif
