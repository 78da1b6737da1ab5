/* Internal to the kernel sets: the loops of conv_dw.c (reference/conv_dw.c has the algorithm). A set's conv_dw.c
 * defines DW_PLANE_VEC (a statement over dwconv's locals: its vector path for plane job, then continue; empty:
 * the portable one) first. */
#ifndef BURNEDGE_CONV_DW_LOOPS_H
#define BURNEDGE_CONV_DW_LOOPS_H

#include "workers.h"
#include "conv.h"

/* copies the input plane into the padded, phase-split plane P; only the cells that hold input are written (the
 * rest of P was zeroed once and is never written) */
static void pad_plane(const float *x, const be_conv_geo *g, long hp, long rl, float *P) {
    const int sw = g->sw;
    const long r0 = g->ph, r1 = g->ph + g->H < hp ? g->ph + g->H : hp;
    for (int p = 0; p < sw; p++) {
        const long lo = g->pw - p, hi = g->W - 1 + g->pw - p;
        long q0 = lo > 0 ? (lo + sw - 1) / sw : 0, q1 = hi >= 0 ? hi / sw + 1 : 0;
        q1 = q1 < rl ? q1 : rl;
        if (q1 <= q0) continue;
        const long n = q1 - q0;
        for (long r = r0; r < r1; r++) {
            float *d = P + (r * sw + p) * rl + q0;
            const float *src = x + (r - g->ph) * g->W + (q0 * sw + p - g->pw);
            if (sw == 1)
                for (long q = 0; q < n; q++) d[q] = src[q];
            else
                for (long q = 0; q < n; q++) d[q] = src[q * sw];
        }
    }
}

static void plane_portable(const float *P, long rl, const float *wk, float *yp, const be_epi *e, long m,
                           const be_conv_geo *g) {
    const long rstride = (long)g->sw * rl;
    for (int oy = 0; oy < g->OH; oy++) {
        const float *rows = P + (long)oy * g->sh * rstride;
        for (int ox = 0; ox < g->OW; ox++) {
            float acc = 0.0f;
            for (int ky = 0; ky < g->KH; ky++) {
                const float *rp = rows + (long)ky * g->dh * rstride + ox;
                for (int kx = 0; kx < g->KW; kx++) {
                    const int o = kx * g->dw;
                    acc += wk[ky * g->KW + kx] * rp[(o % g->sw) * rl + o / g->sw];
                }
            }
            const long j = (long)oy * g->OW + ox;
            yp[j] = be_epi_apply(e, acc, m, j);
        }
    }
}

typedef struct {
    const float *x, *w;
    float *y, *scratch;
    const be_epi *e;
    const be_conv_geo *g;
    int portable;
} dw_nchw_call;

/* planes (image, output channel) [lo, hi) on thread t, in its scratch slice: a padded input plane */
static void dw_planes(void *ctx, int t, long lo, long hi) {
    const dw_nchw_call *c = ctx;
    const be_conv_geo *g = c->g;
    const float *x = c->x, *w = c->w;
    float *y = c->y;
    const int portable = c->portable;
    const long hp = (long)(g->OH - 1) * g->sh + (long)(g->KH - 1) * g->dh + 1;
    const long rl = be_dwconv_row(g), slice = hp * g->sw * rl;
    const long hw = (long)g->H * g->W, ohw = (long)g->OH * g->OW, kk = (long)g->KH * g->KW;
    const int mult = g->M / g->C;
    float *P = c->scratch + (long)t * slice;
    memset(P, 0, (size_t)slice * sizeof(float));
    long padded = -1;
    for (long job = lo; job < hi; job++) {
        const long n = job / g->M, m = job % g->M, src = n * g->C + m / mult;
        if (src != padded) {
            pad_plane(x + src * hw, g, hp, rl, P);
            padded = src;
        }
        be_epi ep = *c->e;
        if (ep.add1) ep.add1 += n * g->M * ohw;
        float *yp = y + job * ohw;
        DW_PLANE_VEC()
        plane_portable(P, rl, w + m * kk, yp, &ep, m, g);
    }
}

static void dwconv(const float *x, const float *w, float *y, const be_epi *e, const be_conv_geo *g, float *scratch,
                   int threads, int portable) {
    const long ohw = (long)g->OH * g->OW, kk = (long)g->KH * g->KW;
    const long jobs = (long)g->N * g->M;
    int nt = threads < BE_DENSE_MAX_THREADS ? threads : BE_DENSE_MAX_THREADS;
    if ((double)jobs * ohw * kk < 100000.0) nt = 1;
    if (nt > jobs) nt = (int)jobs;
    dw_nchw_call c = {x, w, y, scratch, e, g, portable};
    be_parallel(nt, jobs, dw_planes, &c);
}

void be_dwconv2d_f32(const float *x, const float *w, float *y, const be_epi *e, const be_conv_geo *g, float *scratch,
                     int threads) {
    dwconv(x, w, y, e, g, scratch, threads, 0);
}

void be_dwconv2d_f32_portable(const float *x, const float *w, float *y, const be_epi *e, const be_conv_geo *g,
                              float *scratch, int threads) {
    dwconv(x, w, y, e, g, scratch, threads, 1);
}

#endif
