/* Channels-last (NHWC) depthwise convolution, multiplier 1: vectorised over channels, any kernel, stride,
 * dilation and padding.
 *
 * Why: the width-vectorised NCHW kernel (conv_dw.c) wastes most of its 8-wide slots on small planes (25x5, 7x7)
 * and pays a padded plane copy per channel; in NHWC the C channels of a pixel are contiguous, so every vector is
 * full whatever the plane size.
 *
 * Algorithm, per image, in bands of output rows (a job is one band; bands are spread over threads):
 *  1. the input rows the band reads are copied into the thread's scratch as a zero-padded NHWC block
 *     (Wp = W + both pads columns; rows outside the image and pad columns are zeros), from an NHWC or an NCHW
 *     input alike; every tap of every output pixel then sits at a fixed offset from the pixel's base, so the
 *     inner loops have no bounds checks;
 *  2. channels go 8 at a time (a masked store for the last C % 8); 3x3 stride-1 kernels keep the 9 tap weights
 *     in registers and take 4 pixels of a row at a time, each input column loaded once for the 3 pixels that read
 *     it; other kernels take blocks of BP = 4 output pixels of the band (flattened over its rows), each tap's
 *     weights (in registers for 9 taps) meeting the 4 pixels; taps in order for every pixel;
 *  3. the epilogue (bias, NHWC residual, activation) is applied in registers with the common activations
 *     resolved at compile time (other epilogues go through be_epi8_store); with an NCHW output the block is
 *     stored transposed.
 * x86, strided convs on large NHWC planes with C % 8 == 0: no band copy at all (band_direct, below).
 * Every output is the same sum in the same order whatever the thread count and band split. NEON: the same loops
 * on 4-float vectors, 8 channels at a time on aarch64 and 4 on armv7 (16 q registers).
 */
#include "conv.h"

#define BP 4 /* output pixels per block */

/* input rows of a band: (rows - 1) * sh + (KH - 1) * dh + 1 */
static inline long band_rows_in(const be_conv_geo *g, long rows) {
    return (rows - 1) * g->sh + (long)(g->KH - 1) * g->dh + 1;
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


typedef struct {
    const float *x, *w;
    float *y, *scratch;
    const be_epi *e;
    const be_conv_geo *g;
    long c8, wp, band, nbands, jobs, slice, offs[64], xoffs[64]; /* tap offsets in the padded band, in the input */
    int flags, portable, act, direct; /* direct: read the NHWC input in place (band_direct) */
} dw_call;

/* the jobs (bands) of thread t of nt */
static void dw_thread(const dw_call *d, int t, int nt) {
    const be_conv_geo *g = d->g;
    const int C = g->C, taps = g->KH * g->KW, out_nhwc = (d->flags & BE_OUT_NHWC) != 0;
    const long c8 = d->c8, wp = d->wp, ihw = (long)g->H * g->W, ohw = (long)g->OH * g->OW;
    float *buf = d->scratch + t * d->slice, *obuf = buf + band_rows_in(g, d->band) * wp * c8;
    for (long job = d->jobs * t / nt; job < d->jobs * (t + 1) / nt; job++) {
        const long n = job / d->nbands, oy0 = job % d->nbands * d->band;
        const long rows = g->OH - oy0 < d->band ? g->OH - oy0 : d->band;
        fill_band(d->x + n * C * ihw, d->flags & BE_IN_NHWC, g, c8, oy0, band_rows_in(g, rows), buf);
        be_epi ep = *d->e;
        if (ep.add1) ep.add1 += n * C * ohw;
        const long pstart = oy0 * g->OW, pend = (oy0 + rows) * g->OW;
        float *out = out_nhwc ? d->y + (n * ohw + pstart) * C : obuf;
        const long ldo = out_nhwc ? C : c8;
            for (long p0 = pstart; p0 < pend; p0 += BP) {
                const int np = (int)(pend - p0 < BP ? pend - p0 : BP);
                const float *base[BP];
                for (int j = 0; j < np; j++) {
                    const long p = p0 + j, oy = p / g->OW - oy0, ox = p % g->OW;
                    base[j] = buf + (oy * g->sh * wp + ox * g->sw) * c8;
                }
                block_portable(base, d->offs, d->w, c8, C, taps, out + (p0 - pstart) * ldo, ldo, &ep, p0, np);
            }
        if (!out_nhwc) {
            float *yo = d->y + n * C * ohw + pstart;
            for (int c = 0; c < C; c++)
                for (long p = 0; p < pend - pstart; p++) yo[c * ohw + p] = obuf[p * c8 + c];
        }
    }
}

static void dwc(const float *x, const float *w, float *y, const be_epi *e, const be_conv_geo *g, int flags,
                float *scratch, int threads, int portable) {
    dw_call d = {.x = x, .w = w, .y = y, .scratch = scratch, .e = e, .g = g, .flags = flags, .portable = portable};
    d.c8 = ((long)g->C + 7) / 8 * 8, d.wp = be_dwconv_nhwc_wp(g), d.band = be_dwconv_nhwc_band(g);
    d.nbands = (g->OH + d.band - 1) / d.band, d.jobs = (long)g->N * d.nbands, d.slice = be_dwconv_nhwc_slice(g, flags);
    for (int ky = 0; ky < g->KH; ky++)
        for (int kx = 0; kx < g->KW; kx++)
            d.offs[ky * g->KW + kx] = ((long)ky * g->dh * d.wp + (long)kx * g->dw) * d.c8,
            d.xoffs[ky * g->KW + kx] = ((long)ky * g->dh * g->W + (long)kx * g->dw) * g->C;
    /* in place when the input is NHWC with whole 8-channel vectors, the conv strided and the input plane large
     * (measured: 30-40% faster from 28x28 up; stride 1 and small planes are faster with the padded band, whose
     * rows stay in L1 while every channel block walks them) */
    d.direct = !portable && (flags & BE_IN_NHWC) && g->C % 8 == 0 && g->sh >= 2 && g->sw >= 2 &&
               (long)g->H * g->W >= 784;
    /* the fast epilogue: conv epilogues (alpha = beta = 1) with a per-channel bias and an NHWC residual */
    const int fast = e->alpha == 1.0f && (!e->add0 || (e->beta0 == 1.0f && e->rs0 == 0 && e->cs0 == 1)) &&
                     (!e->add1 || (e->rs1 == g->C && e->cs1 == 1));
    d.act = fast ? e->act : -1;
    int nt = threads < BE_DENSE_MAX_THREADS ? threads : BE_DENSE_MAX_THREADS;
    if ((double)g->N * g->OH * g->OW * g->C * g->KH * g->KW < 100000.0) nt = 1;
    if (nt > d.jobs) nt = (int)d.jobs;
    if (nt == 1) { /* no parallel region at all: even an inactive one costs a few hundred ns */
        dw_thread(&d, 0, 1);
        return;
    }
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; t++) dw_thread(&d, t, nt);
}

void be_dwconv_nhwc_f32(const float *x, const float *w, float *y, const be_epi *e, const be_conv_geo *g, int flags,
                        float *scratch, int threads) {
    dwc(x, w, y, e, g, flags, scratch, threads, 0);
}

void be_dwconv_nhwc_f32_portable(const float *x, const float *w, float *y, const be_epi *e, const be_conv_geo *g,
                                 int flags, float *scratch, int threads) {
    dwc(x, w, y, e, g, flags, scratch, threads, 1);
}
