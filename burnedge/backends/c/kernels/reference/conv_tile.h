/* Internal to the kernel sources (conv_nhwc.c, conv_wino.c of every set): the NHWC implicit-GEMM tiles.
 *
 * A tile is MR = 6 (or 8) output pixels x 16 (or 8) output channels: per k two (one) weight vectors of a B panel
 * and one broadcast per pixel from its base + koff[k]; every output is one dot product in k order, started from
 * the bias in the fast epilogue (act >= 0: alpha = beta = 1, a per-column bias, an NHWC residual, the activation
 * known at compile time), else stored through be_epi8_store (act = -1). NEON: tile_neon, the same tiles as
 * 4-float vectors (arm_dense.h be_neon_panel).
 * This header: the portable tile and the padding helper; x86_conv_tile.h and arm_conv_tile.h: the vector ones.
 */
#ifndef BURNEDGE_CONV_TILE_H
#define BURNEDGE_CONV_TILE_H

#include "conv.h"

/* copies the g->N images of x (NHWC, or NCHW when !in_nhwc) into zero-padded NHWC images at xp (each hp x wp x C,
 * g->ph rows and g->pw columns of zeros before the image, zeros after it), rows split over `threads` when large */
void be_nhwc_pad_images(const float *x, int in_nhwc, const be_conv_geo *g, long hp, long wp, float *xp, int threads);

/* one tile, portable: rows r < mr (pixel bases base[r]), columns < nr of the B panel b */
static inline void tile_portable(long K, const int *koff, const float *const *base, int mr, const float *b, int nr,
                                 float *c, long ldc, const be_epi *e, long i0, long j0) {
    for (int r = 0; r < mr; r++) {
        float acc[BE_NR] = {0};
        for (long k = 0; k < K; k++) {
            const float av = base[r][koff[k]];
            for (int j = 0; j < BE_NR; j++) acc[j] += av * b[k * BE_NR + j];
        }
        for (int j = 0; j < nr; j++) c[r * ldc + j] = be_epi_apply(e, acc[j], i0 + r, j0 + j);
    }
}

#endif
