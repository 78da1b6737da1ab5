/* Internal to the kernel sets: the job loop of conv_nhwc.c (reference/conv_nhwc.c has the algorithm). A set's
 * conv_nhwc.c defines transpose_row (an NCHW row as NHWC pixels) and NHWC_TILE() (one tile: the micro-kernel its
 * set picks for the panel's shape and activation, from run_jobs' locals) first, then includes this; then it defines
 * run_any (a thread's jobs, by activation and kind) and includes conv_nhwc_loops.h. */
#ifndef BURNEDGE_CONV_NHWC_JOBS_H
#define BURNEDGE_CONV_NHWC_JOBS_H

#include "conv.h"
#include "isa.h" /* BE_PAR_MIN_COPY_BYTES */
#include "workers.h"

/* row r of the padded image xp of image xi (see conv_tile.h) */
static void pad_row(const float *xi, int in_nhwc, const be_conv_geo *g, long wp, long r, float *d) {
    const long C = g->C, hw = (long)g->H * g->W, iy = r - g->ph;
    if (iy < 0 || iy >= g->H) {
        memset(d, 0, (size_t)(wp * C) * sizeof(float));
        return;
    }
    memset(d, 0, (size_t)g->pw * C * sizeof(float));
    memset(d + ((long)g->pw + g->W) * C, 0, (size_t)(wp - g->pw - g->W) * C * sizeof(float));
    if (in_nhwc || C == 1)
        memcpy(d + (long)g->pw * C, xi + iy * g->W * C, (size_t)g->W * C * sizeof(float));
    else
        transpose_row(xi + iy * g->W, hw, C, g->W, d + (long)g->pw * C);
}

typedef struct {
    const float *x;
    float *xp;
    const be_conv_geo *g;
    long hp, wp;
    int in_nhwc;
} pad_call;

static void pad_rows(void *ctx, int t, long lo, long hi) {
    const pad_call *c = ctx;
    const long chw = (long)c->g->C * c->g->H * c->g->W, img = c->hp * c->wp * c->g->C;
    (void)t;
    for (long j = lo; j < hi; j++) {
        const long n = j / c->hp, r = j % c->hp;
        pad_row(c->x + n * chw, c->in_nhwc, c->g, c->wp, r, c->xp + n * img + r * c->wp * c->g->C);
    }
}

void be_nhwc_pad_images(const float *x, int in_nhwc, const be_conv_geo *g, long hp, long wp, float *xp, int threads) {
    pad_call c = {x, xp, g, hp, wp, in_nhwc};
    const long rows = (long)g->N * hp;
    if ((double)rows * wp * g->C * sizeof(float) < BE_PAR_MIN_COPY_BYTES) threads = 1;
    be_parallel(threads, rows, pad_rows, &c);
}

typedef struct {
    const float *xp, *wpack;
    const int *koff; /* input offsets of k from a pixel's base */
    float *y, *slices;
    long K, M, ohw, hp, wp, slice, mp, np, ncb, jobs;
    int out_nhwc, rows; /* rows: pixels per row panel, BE_MR, or 8 with the 8x8 tile */
    int pmajor;         /* small planes: one column panel per job, jobs ordered panel by panel */
} conv_job;

/* jobs j0 .. j1-1 of one thread; act: the compile-time activation (-1: generic epilogue, -2: portable); LIN: a 1x1
 * conv read in place (koff the identity, pixel p at p*C) */
static inline __attribute__((always_inline)) void run_jobs(const conv_job *q, const be_conv_geo *g, const be_epi *e,
                                                           int t, long j0, long j1, const int act, const int LIN) {
    float *tbuf = q->slices + t * q->slice;
    /* (image, row panel, column block) of job j0 and the output position of the panel's first pixel, then
     * counted forward (no divisions per job); pmajor: jobs go column panel by column panel */
    long cb = j0 % q->ncb, p = j0 / q->ncb % q->mp, n = j0 / q->ncb / q->mp;
    if (q->pmajor) p = j0 % q->mp, cb = j0 / q->mp % q->ncb, n = j0 / q->mp / q->ncb;
    const int R = q->rows;
    long py = p * R / g->OW, px = p * R % g->OW;
    for (long job = j0; job < j1; job++) {
        const long i0 = p * R;
        const long qa = q->ncb == 1 ? 0 : q->np * cb / q->ncb, qb = q->ncb == 1 ? q->np : q->np * (cb + 1) / q->ncb;
        const int mr = (int)(q->ohw - i0 < R ? q->ohw - i0 : R);
        const float *xi = q->xp + n * q->hp * q->wp * g->C, *base[8];
        const int *koff = q->koff;
        for (long r = 0, oy = py, ox = px; r < mr; r++) {
            base[r] = xi + (oy * g->sh * q->wp + ox * g->sw) * g->C;
            if (++ox == g->OW) ox = 0, oy++;
        }
        /* a full panel whose pixels are evenly spaced in the input: on one output row, or any 1x1 read in place */
        const int full = mr == R && (LIN || px + R <= g->OW);
        const long st = (long)g->sw * g->C;
        (void)full, (void)st; /* unused in the portable build */
        be_epi ep = *e;
        if (ep.add1) ep.add1 += n * q->M * q->ohw;
        float *yi = q->y + n * q->M * q->ohw;
        for (long qq = qa; qq < qb; qq++) {
            const long jc = qq * BE_NR;
            const int nr = (int)(q->M - jc < BE_NR ? q->M - jc : BE_NR);
            const float *b = q->wpack + qq * BE_NR * q->K;
            float *c = q->out_nhwc ? yi + i0 * q->M + jc : tbuf;
            const long ldc = q->out_nhwc ? q->M : BE_NR;
            NHWC_TILE();
            if (!q->out_nhwc)
                for (int j = 0; j < nr; j++)
                    for (int r = 0; r < mr; r++) yi[(jc + j) * q->ohw + i0 + r] = tbuf[r * BE_NR + j];
        }
        if (q->pmajor) {
            if (++p < q->mp) {
                for (px += R; px >= g->OW;) px -= g->OW, py++;
            } else {
                p = 0, py = 0, px = 0;
                if (++cb == q->ncb) cb = 0, n++;
            }
        } else if (++cb == q->ncb) {
            cb = 0;
            if (++p == q->mp)
                p = 0, n++, py = 0, px = 0;
            else
                for (px += R; px >= g->OW;) px -= g->OW, py++;
        }
    }
}

#endif
