/* Internal to the kernel sets: the phase split and the portable tile and stores of conv_stem.c, which every
 * set's tiles build on (reference/conv_stem.c has the algorithm). A set's conv_stem.c defines the statement
 * hook STEM_PHASES_VEC (over build_phases' locals; empty: the scalar split) before including this. */
#ifndef BURNEDGE_CONV_STEM_COMMON_H
#define BURNEDGE_CONV_STEM_COMMON_H

#include "conv_stem.h"

/* step 1: ph[((c*hp + r)*sw + p)*wq + q] = padded input (c, r, q*sw + p), read straight from the input row (a
 * copy of it would be read back at once, and loads that straddle its fresh stores stall) */
static void build_phases(const float *x, const be_conv_geo *g, long hp, long wq, float *ph) {
    const long sw = g->sw, pw = g->pw, W = g->W, hw = (long)g->H * W, rows = (long)g->C * hp;
    for (long cr = 0; cr < rows; cr++) {
        const long c = cr / hp, r = cr % hp, iy = r - g->ph;
        float *d = ph + cr * sw * wq;
        if (iy < 0 || iy >= g->H) {
            memset(d, 0, (size_t)(sw * wq) * sizeof(float));
            continue;
        }
        const float *s = x + c * hw + iy * W;
        long q = 0;
        STEM_PHASES_VEC()
        for (; q < wq; q++)
            for (long p = 0; p < sw; p++) {
                const long ix = q * sw + p - pw;
                d[p * wq + q] = ix >= 0 && ix < W ? s[ix] : 0.0f;
            }
    }
}

/* one output of the generic epilogue, into its place in y (one image) */
static inline void put1(float *y, int nhwc, const be_conv_geo *g, const be_epi *e, long oy, long ox, long m,
                        float acc) {
    const long pix = oy * g->OW + ox, ohw = (long)g->OH * g->OW;
    y[nhwc ? pix * g->M + m : m * ohw + pix] = be_epi_apply(e, acc, pix, m);
}

/* a tile's raw sums (4 channels x BE_STEM_PX pixels) through the generic epilogue */
static void store_generic(const float *tb, float *y, int nhwc, const be_conv_geo *g, const be_epi *e, long oy,
                          long x0, long m0) {
    for (int i = 0; i < 4 && m0 + i < g->M; i++)
        for (long j = 0; j < BE_STEM_PX && x0 + j < g->OW; j++)
            put1(y, nhwc, g, e, oy, x0 + j, m0 + i, tb[i * BE_STEM_PX + j]);
}

/* step 2, portable: raw sums of the tile whose pixel 0 reads src + toff[k] */
static void tile_portable(const float *src, const int *toff, long K, const float *w, float *tb) {
    for (int i = 0; i < 4 * BE_STEM_PX; i++) tb[i] = 0.0f;
    for (long k = 0; k < K; k++) {
        const float *s = src + toff[k];
        for (int i = 0; i < 4; i++) {
            const float wv = w[k * 4 + i];
            for (int j = 0; j < BE_STEM_PX; j++) tb[i * BE_STEM_PX + j] += wv * s[j];
        }
    }
}

#endif
