/* Convolutions over NCHW float32 tensors: im2col/GEMM convs, depthwise convs and transposed convs.
 *
 * A 1-D conv is a 2-D conv with H = KH = 1. Epilogues (bias per output channel, residual, activation) use the
 * GEMM's be_epi with rows = output channels and columns = output positions of one image: the lowering sets
 * add0 = bias (rs0 = 1, cs0 = 0) and add1 = residual of image 0 (rs1 = OH*OW, cs1 = 1); kernels shift add1 by
 * image.
 */
#ifndef BURNEDGE_CONV_H
#define BURNEDGE_CONV_H

#include "gemm.h"

typedef struct {
    int N, C, H, W;      /* input */
    int M, G;            /* output channels, groups */
    int KH, KW, sh, sw, dh, dw;
    int ph, pw;          /* begin pads (conv) or begin crop of the full output (transposed conv) */
    int OH, OW;          /* output size */
} be_conv_geo;

/* Conv as GEMM: wpack holds, per group, the (M/G) x (C/G*KH*KW) weights in A panels (gemm.h).
 * scratch: be_conv_scratch floats. */
void be_conv2d_f32(const float *x, const float *wpack, float *y, const be_epi *e, const be_conv_geo *g,
                   float *scratch, int threads);
static inline long be_conv_scratch(const be_conv_geo *g) {
    return be_gemm_scratch((long)(g->C / g->G) * g->KH * g->KW);
}

/* Depthwise conv (C/G == 1, M = C * multiplier): w is M x KH*KW. scratch: be_dwconv_scratch floats. */
void be_dwconv2d_f32(const float *x, const float *w, float *y, const be_epi *e, const be_conv_geo *g, float *scratch,
                     int threads);
void be_dwconv2d_f32_portable(const float *x, const float *w, float *y, const be_epi *e, const be_conv_geo *g,
                              float *scratch, int threads);
static inline long be_dwconv_row(const be_conv_geo *g) { /* floats of one padded input row, per phase */
    const long wp = (long)(g->OW - 1) * g->sw + (long)(g->KW - 1) * g->dw + 1, wq = (wp + g->sw - 1) / g->sw;
    const long reach = ((long)g->OW + 7) / 8 * 8 + (long)(g->KW - 1) * g->dw / g->sw; /* 8-wide reads */
    return wq > reach ? wq : reach;
}
static inline long be_dwconv_scratch(const be_conv_geo *g) {
    long hp = (long)(g->OH - 1) * g->sh + (long)(g->KH - 1) * g->dh + 1;
    return (long)BE_DENSE_MAX_THREADS * hp * g->sw * be_dwconv_row(g) + 64;
}

/* ConvTranspose: wpack holds, per group, the (M/G*KH*KW) x (C/G) transposed weights in A panels; bias may be
 * NULL; (ph, pw) is where the output window starts in the full output. scratch: be_convt_scratch floats. */
void be_convt2d_f32(const float *x, const float *wpack, const float *bias, float *y, const be_conv_geo *g,
                    float *scratch, int threads);
static inline long be_convt_scratch(const be_conv_geo *g) {
    return (long)(g->M / g->G) * g->KH * g->KW * g->H * g->W + be_gemm_scratch(g->C / g->G);
}

#endif
