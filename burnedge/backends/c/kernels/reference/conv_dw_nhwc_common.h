/* Internal to the kernel sets: what conv_dw_nhwc.c's band kernels of every set build on (the band copy, the
 * portable block, the fast epilogue's parameters); reference/conv_dw_nhwc.c has the algorithm. */
#ifndef BURNEDGE_CONV_DW_NHWC_COMMON_H
#define BURNEDGE_CONV_DW_NHWC_COMMON_H

#include "conv.h"

#define BP 4 /* output pixels per block */

/* input rows of a band: (rows - 1) * sh + (KH - 1) * dh + 1 */
static inline long band_rows_in(const be_conv_geo *g, long rows) {
    return (rows - 1) * g->sh + (long)(g->KH - 1) * g->dh + 1;
}

/* 3x3, stride 1, no dilation */
static inline int dw_k3s1(const be_conv_geo *g) {
    return g->KH == 3 && g->KW == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1;
}

/* the padded NHWC block of the band starting at output row oy0: padded rows iy0 .. iy0 + rin - 1 */
static void fill_band(const float *x, int in_nhwc, const be_conv_geo *g, long c8, long oy0, long rin, float *buf) {
    const long C = g->C, wp = be_dwconv_nhwc_wp(g), hw = (long)g->H * g->W;
    const long iy0 = oy0 * g->sh - g->ph;
    for (long r = 0; r < rin; r++) {
        float *d = buf + r * wp * c8;
        const long iy = iy0 + r;
        if (iy < 0 || iy >= g->H) {
            memset(d, 0, (size_t)(wp * c8) * sizeof(float));
            continue;
        }
        memset(d, 0, (size_t)(g->pw * c8) * sizeof(float));
        memset(d + (g->pw + g->W) * c8, 0, (size_t)((wp - g->pw - g->W) * c8) * sizeof(float));
        float *dr = d + (long)g->pw * c8;
        if (in_nhwc && C == c8) {
            memcpy(dr, x + iy * g->W * C, (size_t)(g->W * C) * sizeof(float));
        } else if (in_nhwc) {
            const float *s = x + iy * g->W * C;
            for (long ix = 0; ix < g->W; ix++) {
                for (long c = 0; c < C; c++) dr[ix * c8 + c] = s[ix * C + c];
                for (long c = C; c < c8; c++) dr[ix * c8 + c] = 0.0f;
            }
        } else {
            for (long c = 0; c < c8; c++) {
                const float *s = x + c * hw + iy * g->W;
                if (c >= C)
                    for (long ix = 0; ix < g->W; ix++) dr[ix * c8 + c] = 0.0f;
                else
                    for (long ix = 0; ix < g->W; ix++) dr[ix * c8 + c] = s[ix];
            }
        }
    }
}

/* outputs of np pixels, portable: out[j*ldo + c] for pixel j < np, channel c < C; pixel j reads base[j] + offs[t] */
static void block_portable(const float *const *base, const long *offs, const float *w, long c8, int C, int taps,
                           float *out, long ldo, const be_epi *e, long p0, int np) {
    for (int j = 0; j < np; j++)
        for (int c = 0; c < C; c++) {
            float acc = 0.0f;
            for (int t = 0; t < taps; t++) acc += w[t * c8 + c] * base[j][offs[t] + c];
            out[j * ldo + c] = be_epi_apply(e, acc, p0 + j, c);
        }
}

typedef struct {
    const float *bias, *res; /* bias[c]; NHWC residual of this image at res[p*C + c]; NULL: none */
    long C;
    float p0, p1;
} fast_epi;

#endif
