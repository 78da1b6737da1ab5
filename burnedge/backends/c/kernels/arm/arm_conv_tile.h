/* Internal to the ARM kernel set: the NEON NHWC implicit-GEMM tiles of conv_nhwc.c and conv_wino.c (arm_dense.h
 * be_neon_panel with the conv epilogue; see conv_tile.h). */
#ifndef BURNEDGE_ARM_CONV_TILE_H
#define BURNEDGE_ARM_CONV_TILE_H

#include "arm_dense.h"
#include "conv_tile.h"

/* the bias of columns j0.. (nr of them) as 4 vectors: the accumulators' start in the fast path, else zeros */
static BE_AI void bias_neon(const be_epi *e, long j0, int nr, const int act, float32x4_t *init) {
    for (int v = 0; v < 4; v++) init[v] = vdupq_n_f32(0.0f);
    if (act < 0 || !e->add0) return;
    for (int v = 0; v < 4 && 4 * v < nr; v++)
        init[v] = be_ld4n(e->add0 + j0 + 4 * v, 1, nr - 4 * v < 4 ? nr - 4 * v : 4);
}

/* the epilogue of row i, columns j0.. (nr of them) from acc[j/4]; act as store_row */
static BE_AI void store_row_neon(float *c, const float32x4_t *acc, const be_epi *e, long i, long j0, int nr,
                                 const int act) {
    for (int j = 0; j < nr; j += 4) {
        const int n = nr - j < 4 ? nr - j : 4;
        float32x4_t v = acc[j / 4];
        if (act < 0) {
            be_epi4_store(c + j, v, e, i, j0 + j, n);
            continue;
        }
        if (e->add1) v = vaddq_f32(v, be_ld4n(e->add1 + i * e->rs1 + j0 + j, 1, n));
        be_st4n(c + j, be_act4(v, act, e->p0, e->p1), n);
    }
}

/* the NEON tile (arm_dense.h be_neon_panel): R = 6 rows x 16 columns, or 8 x 8 for convs with at most 8 output
 * channels; MODE as tile_avx2 (1: rows at base[0] + r*st, 2: that and koff the identity) */
static BE_AI void tile_neon(long K, const int *koff, const float *const *base, int mr, const float *b, int nr,
                            float *c, long ldc, const be_epi *e, long i0, long j0, const int act, long st,
                            const int MODE, const int R) {
    const float *a[8];
    const int last = mr > 1 ? mr - 1 : 0; /* rows past mr re-read the last row: their results are dropped */
    for (int r = 0; r < R; r++) a[r] = MODE ? base[0] + r * st : base[r < last ? r : last];
    float32x4_t init[4], acc[32];
    bias_neon(e, j0, nr, act, init);
    be_neon_panel(K, a, koff, 1, b, BE_NR, init, acc, R, mr, nr, MODE != 2, 0);
    for (int r = 0; r < mr; r++) store_row_neon(c + r * ldc, acc + r * 4, e, i0 + r, j0, nr, act);
}

#endif
