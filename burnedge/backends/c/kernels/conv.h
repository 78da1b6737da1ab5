/* Convolutions over float32 tensors: NCHW im2col/GEMM convs, depthwise convs and transposed convs (conv.c,
 * conv_dw.c), and the channels-last kernels below (conv_nhwc.c, conv_wino.c, conv_dw_nhwc.c).
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

/* Conv as GEMM: wpack holds, per group, the (M/G) x (C/G*KH*KW) weights in A panels (gemm.h), or when `packed`
 * is 0 the weights as ONNX lays them out (M x C/G*KH*KW: weights that arrive at run time).
 * scratch: be_conv_scratch floats. */
void be_conv2d_f32(const float *x, const float *wpack, int packed, float *y, const be_epi *e, const be_conv_geo *g,
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

/* ConvTranspose: wpack holds, per group, the (M/G*KH*KW) x (C/G) transposed weights in A panels, or when
 * `packed` is 0 the weights as ONNX lays them out (C x M/G*KH*KW); bias may be NULL; (ph, pw) is where the output
 * window starts in the full output. scratch: be_convt_scratch floats. */
void be_convt2d_f32(const float *x, const float *wpack, int packed, const float *bias, float *y,
                    const be_conv_geo *g, float *scratch, int threads);
static inline long be_convt_scratch(const be_conv_geo *g) {
    return (long)(g->M / g->G) * g->KH * g->KW * g->H * g->W + be_gemm_scratch(g->C / g->G);
}

/* ---- channels-last (NHWC) kernels: conv_nhwc.c, conv_wino.c, conv_dw_nhwc.c -------------------------------------
 * A tensor between two convs may live in the arena as NHWC (N, H, W, C) instead of NCHW; `flags` say which side is
 * NHWC. These kernels compute in NHWC whatever the layouts: an NCHW input is transposed while it is copied into
 * their zero-padded scratch, an NCHW output is written through a transposed store. Their epilogues use rows =
 * output pixels of one image and columns = output channels: the lowering sets add0 = bias (rs0 = 0, cs0 = 1) and
 * add1 = residual of image 0 (NHWC: rs1 = M, cs1 = 1; NCHW: rs1 = 1, cs1 = OH*OW); kernels shift add1 by image. */
#define BE_IN_NHWC 1
#define BE_OUT_NHWC 2

/* Conv with one group as an implicit GEMM with rows = output pixels: wpack holds the (KH*KW*C) x M weights, k
 * ordered (ky, kx, c), in B panels (gemm.h). The input is read in place when it is NHWC and needs no padding,
 * else from a zero-padded NHWC copy (hp x wp per image, an NCHW input transposed) in scratch.
 * scratch: be_conv_nhwc_scratch floats. */
void be_conv_nhwc_f32(const float *x, const float *wpack, float *y, const be_epi *e, const be_conv_geo *g, int flags,
                      float *scratch, int threads);
void be_conv_nhwc_f32_portable(const float *x, const float *wpack, float *y, const be_epi *e, const be_conv_geo *g,
                               int flags, float *scratch, int threads);
static inline long be_conv_nhwc_hp(const be_conv_geo *g) {
    const long reach = (long)(g->OH - 1) * g->sh + (long)(g->KH - 1) * g->dh + 1, full = (long)g->ph + g->H;
    return reach > full ? reach : full;
}
static inline long be_conv_nhwc_wp(const be_conv_geo *g) {
    const long reach = (long)(g->OW - 1) * g->sw + (long)(g->KW - 1) * g->dw + 1, full = (long)g->pw + g->W;
    return reach > full ? reach : full;
}
static inline int be_conv_nhwc_padded(const be_conv_geo *g, int flags) { /* is the input copied? */
    return !((flags & BE_IN_NHWC) || g->C == 1) || be_conv_nhwc_hp(g) != g->H || be_conv_nhwc_wp(g) != g->W;
}
static inline long be_conv_nhwc_scratch(const be_conv_geo *g, int flags) {
    const long img = (long)g->N * be_conv_nhwc_hp(g) * be_conv_nhwc_wp(g) * g->C;
    return (be_conv_nhwc_padded(g, flags) ? (img + 15) / 16 * 16 : 0) +
           ((long)g->C * g->KH * g->KW + 15) / 16 * 16 + (long)BE_DENSE_MAX_THREADS * 8 * BE_NR;
}

/* Winograd F(2x2, 3x3) conv (conv_wino.c): 3x3, stride 1, no dilation, one group, C % 8 == 0. upack holds the 16
 * transformed weight matrices U_xi (C x M, xi = 0..15) as B panels, one after the other.
 * scratch: be_conv_wino_scratch floats. */
void be_conv_wino_f32(const float *x, const float *upack, float *y, const be_epi *e, const be_conv_geo *g, int flags,
                      float *scratch, int threads);
void be_conv_wino_f32_portable(const float *x, const float *upack, float *y, const be_epi *e, const be_conv_geo *g,
                               int flags, float *scratch, int threads);
static inline long be_conv_wino_hp(const be_conv_geo *g) { /* rows of the padded image: every 4x4 patch */
    const long need = ((long)g->OH + 1) / 2 * 2 + 2, full = (long)g->ph + g->H;
    return need > full ? need : full;
}
static inline long be_conv_wino_wp(const be_conv_geo *g) {
    const long need = ((long)g->OW + 1) / 2 * 2 + 2, full = (long)g->pw + g->W;
    return need > full ? need : full;
}
/* a thread's V (16 x 6 x C) and the products of two column panels (2 x 16 x 6 x 16), floats */
static inline long be_conv_wino_slice(const be_conv_geo *g) { return 16L * BE_MR * (g->C + 2 * BE_NR); }
/* V of every row panel (6 patches) of the batch, floats: the shared mode's */
static inline long be_conv_wino_vall(const be_conv_geo *g) {
    const long tiles = ((long)g->OH + 1) / 2 * (((long)g->OW + 1) / 2);
    return (long)g->N * ((tiles + BE_MR - 1) / BE_MR) * 16 * BE_MR * g->C;
}
/* Shared mode: where the 16 weight matrices outgrow a core's L2 (over BE_WINO_SHARED_U bytes) and the transformed
 * input of the whole batch does not (up to BE_WINO_SHARED_V), every patch is transformed once into one V that the
 * threads share, then jobs go column panel by column panel: each weight panel is read once per call, not once per
 * six patches (ResNet-18's 14x14x256 convs: 4 MB of weights per row panel, nine row panels). */
#define BE_WINO_SHARED_U (1L << 20)
#define BE_WINO_SHARED_V (1L << 20)
static inline int be_conv_wino_shared(const be_conv_geo *g) {
    return 64L * g->C * g->M > BE_WINO_SHARED_U && 4 * be_conv_wino_vall(g) <= BE_WINO_SHARED_V;
}
static inline long be_conv_wino_scratch(const be_conv_geo *g) {
    const long img = ((long)g->N * be_conv_wino_hp(g) * be_conv_wino_wp(g) * g->C + 15) / 16 * 16;
    if (be_conv_wino_shared(g)) return img + be_conv_wino_vall(g) + (long)BE_DENSE_MAX_THREADS * 32 * BE_MR * BE_NR;
    return img + (long)BE_DENSE_MAX_THREADS * be_conv_wino_slice(g);
}

/* Depthwise conv with multiplier 1 (M = C = G), vectorised over channels: w holds the weights as
 * [KH*KW][C8] (C8 = C rounded up to 8, zero-padded); at most 64 taps. scratch: be_dwconv_nhwc_scratch floats. */
void be_dwconv_nhwc_f32(const float *x, const float *w, float *y, const be_epi *e, const be_conv_geo *g, int flags,
                        float *scratch, int threads);
void be_dwconv_nhwc_f32_portable(const float *x, const float *w, float *y, const be_epi *e, const be_conv_geo *g,
                                 int flags, float *scratch, int threads);
static inline long be_dwconv_nhwc_wp(const be_conv_geo *g) { /* columns of the zero-padded input block */
    const long reach = (long)(g->OW - 1) * g->sw + (long)(g->KW - 1) * g->dw + 1, full = (long)g->pw + g->W;
    return reach > full ? reach : full;
}
static inline long be_dwconv_nhwc_band(const be_conv_geo *g) { /* output rows per job: ~32 KiB of padded input */
    const long row = be_dwconv_nhwc_wp(g) * (((long)g->C + 7) / 8 * 8), halo = (long)(g->KH - 1) * g->dh + 1;
    long rows = 8192 / row > halo ? (8192 / row - halo) / g->sh + 1 : 1;
    return rows < g->OH ? rows : g->OH;
}
static inline long be_dwconv_nhwc_slice(const be_conv_geo *g, int flags) { /* per thread: padded band + a block */
    const long c8 = ((long)g->C + 7) / 8 * 8;
    const long rin = (be_dwconv_nhwc_band(g) - 1) * g->sh + (long)(g->KH - 1) * g->dh + 1;
    return (rin * be_dwconv_nhwc_wp(g) + ((flags & BE_OUT_NHWC) ? 0 : be_dwconv_nhwc_band(g) * g->OW)) * c8 + 16;
}
static inline long be_dwconv_nhwc_scratch(const be_conv_geo *g, int flags) {
    return BE_DENSE_MAX_THREADS * be_dwconv_nhwc_slice(g, flags);
}

#endif
