/* The stem convolution: KxK, one group, an NCHW input with few channels (3 for RGB), any stride/dilation/padding.
 *
 * Why: with C = 3 a pixel holds 3 floats, so the channels-last implicit GEMM (conv_nhwc.c) needs a transposed
 * padded copy of the image and then one broadcast per pixel per tap, a load for every multiply-add. Here the
 * vectors run along output pixels of a row instead, and the weights are the broadcasts, each one meeting 24 pixels.
 *
 * Algorithm, per image:
 *  1. the input is split once into a zero-padded "phase image": for each channel c, padded row r and column phase
 *     p < sw, the padded columns p, p + sw, p + 2sw, ... one after the other (stride 2: even and odd columns apart,
 *     deinterleaved with AVX2 shuffles from the input rows); then the input of output pixel ox under tap
 *     (c, ky, kx) in output row oy
 *     sits at phase offset ox + (kx*dw)/sw of row oy*sh + ky*dh, phase (kx*dw) % sw: consecutive output pixels read
 *     consecutive floats, and a table holds each tap's offset;
 *  2. a tile is 4 output channels x 24 pixels of one output row (12 accumulators); per tap three 8-wide input
 *     loads meet four broadcast weights in 12 FMAs; taps in (c, ky, kx) order for every output;
 *  3. the epilogue: accumulators start from the bias, then Relu/Clip in registers, stored as rows (NCHW) or,
 *     transposed 4x8 in registers, as 4-channel pieces of pixels (NHWC); any other epilogue goes through a tile
 *     buffer and be_epi_apply.
 * Threads split the output rows; every output is the same sum in the same order whatever the thread count.
 */
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


/* output row oy of one image: every channel group, every tile; act: the fast epilogue's activation, -1 generic,
 * -2 portable */
static void stem_row(const float *ph, const int *toff, const float *wpack, float *y, int nhwc, const be_conv_geo *g,
                     const be_epi *e, long wq, long oy, int act) {
    const long K = (long)g->C * g->KH * g->KW, groups = ((long)g->M + 3) / 4;
    const float *rowsrc = ph + oy * g->sh * g->sw * wq;
    float tb[4 * BE_STEM_PX];
    for (long q = 0; q < groups; q++) {
        const float *w = wpack + q * K * 4;
        for (long x0 = 0; x0 < g->OW; x0 += BE_STEM_PX) {
            const float *src = rowsrc + x0;
            tile_portable(src, toff, K, w, tb);
            store_generic(tb, y, nhwc, g, e, oy, x0, q * 4);
        }
    }
}

static void conv_stem(const float *x, const float *wpack, float *y, const be_epi *e, const be_conv_geo *g, int flags,
                      float *scratch, int threads, int portable) {
    const long hp = be_conv_stem_hp(g), wq = be_conv_stem_wq(g), ohw = (long)g->OH * g->OW;
    const long img = (long)g->C * hp * g->sw * wq, chw = (long)g->C * g->H * g->W;
    float *ph = scratch;
    int *toff = (int *)(scratch + img);
    for (int c = 0, k = 0; c < g->C; c++) /* step 1's tap table */
        for (int ky = 0; ky < g->KH; ky++)
            for (int kx = 0; kx < g->KW; kx++, k++) {
                const long p = ((long)kx * g->dw) % g->sw, off = ((long)kx * g->dw) / g->sw;
                toff[k] = (int)((((long)c * hp + (long)ky * g->dh) * g->sw + p) * wq + off);
            }
    const int fast = e->alpha == 1.0f && (!e->add0 || (e->beta0 == 1.0f && e->rs0 == 0 && e->cs0 == 1)) && !e->add1 &&
                     e->act <= BE_ACT_CLIP;
    const int act = portable ? -2 : fast ? e->act : -1, nhwc = (flags & BE_OUT_NHWC) != 0;
    for (int n = 0; n < g->N; n++) {
        build_phases(x + n * chw, g, hp, wq, ph);
        float *yn = y + n * (long)g->M * ohw;
        be_epi en = *e;
        if (en.add1) en.add1 += n * (long)g->M * ohw;
        BE_PARALLEL_FOR(threads > 1 && g->OH > 1)
        for (long oy = 0; oy < g->OH; oy++) stem_row(ph, toff, wpack, yn, nhwc, g, &en, wq, oy, act);
    }
}

void be_conv_stem_f32(const float *x, const float *wpack, float *y, const be_epi *e, const be_conv_geo *g, int flags,
                      float *scratch, int threads) {
    conv_stem(x, wpack, y, e, g, flags, scratch, threads, 0);
}

void be_conv_stem_f32_portable(const float *x, const float *wpack, float *y, const be_epi *e, const be_conv_geo *g,
                               int flags, float *scratch, int threads) {
    conv_stem(x, wpack, y, e, g, flags, scratch, threads, 1);
}
