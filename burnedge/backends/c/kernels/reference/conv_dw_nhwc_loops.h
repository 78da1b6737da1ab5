/* Internal to the kernel sets: the job loop and driver of conv_dw_nhwc.c (reference/conv_dw_nhwc.c has the
 * algorithm). A set's conv_dw_nhwc.c defines, after conv_dw_nhwc_common.h, its band kernels and the statement
 * hooks DWC_DIRECT_VEC and DWC_BAND_VEC (over dw_jobs's locals, without a semicolon: DWC_BAND_VEC ends in
 * `else`; empty: the portable code), then includes this. */
#ifndef BURNEDGE_CONV_DW_NHWC_LOOPS_H
#define BURNEDGE_CONV_DW_NHWC_LOOPS_H

#include "conv_dw_nhwc_common.h"
#include "workers.h"

typedef struct {
    const float *x, *w;
    float *y, *scratch;
    const be_epi *e;
    const be_conv_geo *g;
    long c8, wp, band, nbands, jobs, slice, offs[64], xoffs[64]; /* tap offsets in the padded band, in the input */
    int flags, portable, act, direct; /* direct: read the NHWC input in place (band_direct) */
} dw_call;

/* the jobs (bands) [lo, hi) on thread t (its scratch slice) */
static void dw_jobs(void *ctx, int t, long lo, long hi) {
    const dw_call *d = ctx;
    const be_conv_geo *g = d->g;
    const int C = g->C, taps = g->KH * g->KW, out_nhwc = (d->flags & BE_OUT_NHWC) != 0;
    const long c8 = d->c8, wp = d->wp, ihw = (long)g->H * g->W, ohw = (long)g->OH * g->OW;
    float *buf = d->scratch + t * d->slice, *obuf = buf + band_rows_in(g, d->band) * wp * c8;
    for (long job = lo; job < hi; job++) {
        const long n = job / d->nbands, oy0 = job % d->nbands * d->band;
        const long rows = g->OH - oy0 < d->band ? g->OH - oy0 : d->band;
        DWC_DIRECT_VEC()
        fill_band(d->x + n * C * ihw, d->flags & BE_IN_NHWC, g, c8, oy0, band_rows_in(g, rows), buf);
        be_epi ep = *d->e;
        if (ep.add1) ep.add1 += n * C * ohw;
        const long pstart = oy0 * g->OW, pend = (oy0 + rows) * g->OW;
        float *out = out_nhwc ? d->y + (n * ohw + pstart) * C : obuf;
        const long ldo = out_nhwc ? C : c8;
            DWC_BAND_VEC()
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
    /* in place when the input is NHWC with whole 8-channel vectors and either the conv strided on a large plane
     * (measured: 30-40% faster from 28x28 up; strided small planes are faster with the padded band, whose rows stay
     * in L1 while every channel block walks them) or 3x3 stride 1 where the band is at most 2 output rows (its
     * copy reads each input row 2-3 times). Measured 2026-12-06 on a Zen 4, AVX-512 build, both versions in one
     * process: 112x112x32 1.73x, 56x56x144 and 28x28x192 1.41x, 14x14x384 1.19x, 7x7x960 1.03x as fast in place;
     * on DS-CNN's 25x5x64 (a band of 16 rows) the in-place path was 1.45x slower, its narrow rows mostly border
     * pixels. Only the x86 set reads in place. */
    d.direct = !portable && (flags & BE_IN_NHWC) && g->C % 8 == 0 &&
               ((g->sh >= 2 && g->sw >= 2 && (long)g->H * g->W >= 784) || (dw_k3s1(g) && d.band <= 2));
    /* the fast epilogue: conv epilogues (alpha = beta = 1) with a per-channel bias and an NHWC residual */
    const int fast = e->alpha == 1.0f && (!e->add0 || (e->beta0 == 1.0f && e->rs0 == 0 && e->cs0 == 1)) &&
                     (!e->add1 || (e->rs1 == g->C && e->cs1 == 1));
    d.act = fast ? e->act : -1;
    int nt = threads < BE_DENSE_MAX_THREADS ? threads : BE_DENSE_MAX_THREADS;
    if ((double)g->N * g->OH * g->OW * g->C * g->KH * g->KW < 100000.0) nt = 1;
    if (nt > d.jobs) nt = (int)d.jobs;
    be_parallel(nt, d.jobs, dw_jobs, &d);
}

void be_dwconv_nhwc_f32(const float *x, const float *w, float *y, const be_epi *e, const be_conv_geo *g, int flags,
                        float *scratch, int threads) {
    dwc(x, w, y, e, g, flags, scratch, threads, 0);
}

void be_dwconv_nhwc_f32_portable(const float *x, const float *w, float *y, const be_epi *e, const be_conv_geo *g,
                                 int flags, float *scratch, int threads) {
    dwc(x, w, y, e, g, flags, scratch, threads, 1);
}

#endif
