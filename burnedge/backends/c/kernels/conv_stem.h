/* The stem convolution: a KxK conv of one group on an NCHW input with few channels (the RGB first layer of most
 * CNNs), written to NCHW or NHWC. See conv_stem.c for the algorithm.
 *
 * Weights (packed at lowering time): output channels in groups of 4 (M padded with zero weights to a multiple of
 * 4); group q holds W(4q + i, c, ky, kx) at wpack[(q*K + k)*4 + i], k = (c*KH + ky)*KW + kx, K = C*KH*KW.
 */
#ifndef BURNEDGE_CONV_STEM_H
#define BURNEDGE_CONV_STEM_H

#include "conv.h"

#define BE_STEM_PX 24 /* output pixels of a row a tile covers (three 8-wide vectors) */

/* rows of the padded input the conv reads, and the floats of one phase row (every tile's reads fit in it) */
static inline long be_conv_stem_hp(const be_conv_geo *g) {
    return (long)(g->OH - 1) * g->sh + (long)(g->KH - 1) * g->dh + 1;
}
static inline long be_conv_stem_wq(const be_conv_geo *g) {
    const long tiles = ((long)g->OW + BE_STEM_PX - 1) / BE_STEM_PX * BE_STEM_PX;
    const long reach = ((long)g->pw + g->W + g->sw - 1) / g->sw;
    const long need = tiles + (long)(g->KW - 1) * g->dw / g->sw + 1;
    return (need > reach ? need : reach) + 1;
}
/* scratch floats: the phase image of one input image and the tap table */
static inline long be_conv_stem_scratch(const be_conv_geo *g) {
    return (long)g->C * be_conv_stem_hp(g) * g->sw * be_conv_stem_wq(g) + (long)g->C * g->KH * g->KW + 64;
}

/* y = epilogue(conv(x, W)); flags: BE_OUT_NHWC for a channels-last output (the input is always NCHW) */
void be_conv_stem_f32(const float *x, const float *wpack, float *y, const be_epi *e, const be_conv_geo *g, int flags,
                      float *scratch, int threads);
void be_conv_stem_f32_portable(const float *x, const float *wpack, float *y, const be_epi *e, const be_conv_geo *g,
                               int flags, float *scratch, int threads);

#endif
