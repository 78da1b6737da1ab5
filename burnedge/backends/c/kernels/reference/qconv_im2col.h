/* Internal to the kernel sets: im2col of the int8 GEMM conv (qconv.c of every set defines it first). */
#ifndef BURNEDGE_QCONV_IM2COL_H
#define BURNEDGE_QCONV_IM2COL_H

#include "qconv.h"

/* im2col rows of output positions j0 .. j0+nr-1 (one image and group) as a plain K x 16 int8 block */
static void im2col_plain(const int8_t *x, const be_qconv_geo *g, int cg, long j0, int nr, int8_t pad, int8_t *dst) {
    const long hw = (long)g->H * g->W, k_all = (long)cg * g->KH * g->KW;
    if (nr < BE_QNR)
        for (long k = 0; k < k_all; k++) memset(dst + k * BE_QNR + nr, pad, BE_QNR - nr);
    int c = 0;
    while (c < nr) {
        const long j = j0 + c;
        const int oy = (int)(j / g->OW), ox = (int)(j % g->OW);
        const int len = nr - c < g->OW - ox ? nr - c : g->OW - ox;
        const int iy0 = oy * g->sh - g->ph, ix0 = ox * g->sw - g->pw;
        int8_t *d = dst + c;
        long k = 0;
        for (int ci = 0; ci < cg; ci++) {
            const int8_t *plane = x + ci * hw;
            for (int ky = 0; ky < g->KH; ky++) {
                const int iy = iy0 + ky * g->dh;
                if (iy < 0 || iy >= g->H) {
                    for (int kx = 0; kx < g->KW; kx++, k++) memset(d + k * BE_QNR, pad, (size_t)len);
                    continue;
                }
                const int8_t *row = plane + (long)iy * g->W;
                for (int kx = 0; kx < g->KW; kx++, k++) {
                    int8_t *dk = d + k * BE_QNR;
                    const int ix = ix0 + kx * g->dw, sw = g->sw;
                    int t0 = ix < 0 ? (-ix + sw - 1) / sw : 0, t1 = ix < g->W ? (g->W - 1 - ix) / sw + 1 : 0;
                    t1 = t1 < len ? t1 : len;
                    t0 = t0 < t1 ? t0 : t1;
                    if (t0) memset(dk, pad, (size_t)t0);
                    const int8_t *src = row + (ix + t0 * sw);
                    if (sw == 1)
                        memcpy(dk + t0, src, (size_t)(t1 - t0));
                    else
                        for (int t = t0; t < t1; t++) dk[t] = src[(t - t0) * sw];
                    if (len > t1) memset(dk + t1, pad, (size_t)(len - t1));
                }
            }
        }
        c += len;
    }
}

#endif
