/* int8 convolutions (burnedge.QConv) over NCHW tensors: im2col + int8 GEMM for any group, and depthwise.
 *
 * A 1-D conv is a 2-D conv with H = KH = 1. Padding contributes 0 after subtracting x_zp: the GEMM path pads
 * with the raw x_zp and the lowering folds -x_zp * sum(w[m]) into the bias (`e->bias`, wrapping int32); the
 * depthwise path subtracts x_zp itself (e->bias is then the plain bias).
 */
#ifndef BURNEDGE_QCONV_H
#define BURNEDGE_QCONV_H

#include "qgemm.h"

typedef struct {
    int N, C, H, W;  /* input */
    int M, G;        /* output channels, groups */
    int KH, KW, sh, sw, dh, dw;
    int ph, pw;      /* begin pads */
    int OH, OW;      /* output size */
    int band;        /* channels-last kernels: output rows per band, set by a lean plan (0: the kernel's budget) */
} be_qconv_geo;

/* column panels of one job: their packed bytes stay near 16 KiB */
static inline long be_qconv_nb(long K) {
    const long nb = 16384 / (((K + 1) / 2) * 32);
    return nb < 1 ? 1 : (nb > 16 ? 16 : nb);
}
/* bytes of one column panel in any build (pairs: ceil(K/2)*32; sdot quads: ceil(K/4)*64) */
static inline long be_qconv_pstride(long K) { return (K + 3) / 4 * 64; }
/* a thread's slice: the plain K x 16 block, nb column panels, one weight panel as int8 quads (sdot builds) */
static inline long be_qconv_slice(long K) {
    return K * BE_QNR + be_qconv_nb(K) * be_qconv_pstride(K) + (K + 3) / 4 * 24 + 64;
}

/* QConv as GEMM: wpack holds, per group, the (M/G) x (C/G*KH*KW) weights as A panels (qgemm.h).
 * scratch: be_qconv_scratch bytes. */
void be_qconv2d_i8(const int8_t *x, const int16_t *wpack, int8_t *y, const be_qepi *e, const be_qconv_geo *g,
                   int32_t x_zp, int8_t *scratch, int threads);
static inline long be_qconv_scratch(const be_qconv_geo *g) {
    return (long)BE_Q_MAX_THREADS * be_qconv_slice((long)(g->C / g->G) * g->KH * g->KW) + 64;
}

/* Depthwise QConv (C/G == 1, M = C * multiplier, KH*KW <= 512): wf holds the weights as floats, M x KH*KW.
 * Each input plane minus x_zp is laid out once as floats (zero padding, one row per column phase of the stride);
 * sums of at most 512 products of magnitude <= 255*128 stay below 2^24, so float FMAs are exact.
 * scratch: be_qdwconv_scratch floats. */
void be_qdwconv2d_i8(const int8_t *x, const float *wf, int8_t *y, const be_qepi *e, const be_qconv_geo *g,
                     int32_t x_zp, float *scratch, int threads);
static inline long be_qdwconv_row(const be_qconv_geo *g) {
    const long wp = (long)(g->OW - 1) * g->sw + (long)(g->KW - 1) * g->dw + 1, wq = (wp + g->sw - 1) / g->sw;
    const long reach = ((long)g->OW + 7) / 8 * 8 + (long)(g->KW - 1) * g->dw / g->sw + 8;
    return wq > reach ? wq : reach;
}
static inline long be_qdwconv_plane(const be_qconv_geo *g) {
    const long hp = (long)(g->OH - 1) * g->sh + (long)(g->KH - 1) * g->dh + 1;
    return (hp + 1) * g->sw * be_qdwconv_row(g) + 16;
}
static inline long be_qdwconv_scratch(const be_qconv_geo *g) {
    return (long)BE_Q_MAX_THREADS * be_qdwconv_plane(g) + 64;
}

/* Channels-last QConv (qconv_nhwc.c), flags: 1 = input NHWC, 2 = output NHWC (else NCHW).
 * One group: bpack holds the weights as B panels (qgemm.h) of the (KH*KW*C) x M matrix, k ordered (ky, kx, c);
 * the epilogue is per column (channel), the -x_zp * sum(w) term folded into its bias. scratch: at most
 * be_qconv_nhwc_scratch bytes (the lowering reserves the slices of the threads the driver can use). */
void be_qconv_nhwc_i8(const int8_t *x, const int8_t *bpack, int8_t *y, const be_qepi *e, const be_qconv_geo *g,
                      int flags, int32_t x_zp, int8_t *scratch, int threads);
static inline long be_qconv_nhwc_slice(long K, long M) {
    return (BE_QMR * K + 64 + BE_QMR * M + 64 + be_qgemm_panel_bytes(K) + 63) / 64 * 64;
}
static inline long be_qconv_nhwc_wp(const be_qconv_geo *g) {
    return (long)(g->OW - 1) * g->sw + (long)(g->KW - 1) * g->dw + 1;
}
/* a unit-stride unpadded 1x1 conv on an NHWC input: its rows are read in place, no copy */
static inline int be_qconv_nhwc_direct(const be_qconv_geo *g, int flags) {
    return (flags & 1) && g->KH == 1 && g->KW == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0 &&
           g->OH == g->H && g->OW == g->W;
}
/* padded input rows of a band of `rows` output rows */
static inline long be_qconv_nhwc_rows_in(const be_qconv_geo *g, long rows) {
    return (rows - 1) * g->sh + (long)(g->KH - 1) * g->dh + 1;
}
/* output rows per band: a padded copy of about 64 KiB (at least one row), so scratch is bounded by the row width */
static inline long be_qconv_nhwc_band(const be_qconv_geo *g) {
    if (g->band > 0) return g->band < g->OH ? g->band : g->OH;
    const long row = be_qconv_nhwc_wp(g) * g->C, halo = (long)(g->KH - 1) * g->dh + 1;
    const long rows = 65536 / row > halo ? (65536 / row - halo) / g->sh + 1 : 1;
    return rows < g->OH ? rows : g->OH;
}
/* the padded channels-last copy of one band: [rows in][Wp][C], + 64 bytes the im2col gather may read past it */
static inline long be_qconv_nhwc_copy(const be_qconv_geo *g, int flags) {
    if (be_qconv_nhwc_direct(g, flags)) return 0;
    return (be_qconv_nhwc_rows_in(g, be_qconv_nhwc_band(g)) * be_qconv_nhwc_wp(g) * g->C + 64 + 63) / 64 * 64;
}
static inline long be_qconv_nhwc_scratch(const be_qconv_geo *g, int flags) {
    return be_qconv_nhwc_copy(g, flags) +
           (long)BE_Q_MAX_THREADS * be_qconv_nhwc_slice((long)g->C * g->KH * g->KW, g->M) + 64;
}

/* Depthwise with multiplier 1 (M == C == G, KH*KW <= 512): wf holds the weights as floats [tap][C8] (C8 = C
 * rounded up to 8, zero-padded), the epilogue's per-channel arrays padded to 16 and its bias the plain bias.
 * scratch: be_qdw_nhwc_scratch floats (below). */
void be_qdwconv_nhwc_i8(const int8_t *x, const float *wf, int8_t *y, const be_qepi *e, const be_qconv_geo *g,
                        int flags, int32_t x_zp, float *scratch, int threads);
static inline long be_qdw_nhwc_wp(const be_qconv_geo *g) {
    return (long)(g->OW - 1) * g->sw + (long)(g->KW - 1) * g->dw + 1;
}
/* output rows per job: a padded float band of about 32 KiB (as the float kernel's be_dwconv_nhwc_band), so the
 * scratch stays bounded whatever the plane (a whole plane per thread was 16x the int8 image) */
static inline long be_qdw_nhwc_band(const be_qconv_geo *g) {
    if (g->band > 0) return g->band < g->OH ? g->band : g->OH;
    const long row = be_qdw_nhwc_wp(g) * (((long)g->C + 7) / 8 * 8), halo = (long)(g->KH - 1) * g->dh + 1;
    const long rows = 8192 / row > halo ? (8192 / row - halo) / g->sh + 1 : 1;
    return rows < g->OH ? rows : g->OH;
}
/* one thread's band of at most brows output rows */
static inline long be_qdw_nhwc_slice(const be_qconv_geo *g, long brows) {
    const long rin = (brows - 1) * g->sh + (long)(g->KH - 1) * g->dh + 1;
    return (rin * be_qdw_nhwc_wp(g) * ((g->C + 7) / 8 * 8) + 15) / 16 * 16;
}
/* floats: a band per thread */
static inline long be_qdw_nhwc_scratch(const be_qconv_geo *g) {
    return (long)BE_Q_MAX_THREADS * be_qdw_nhwc_slice(g, be_qdw_nhwc_band(g)) + 64;
}

#endif
