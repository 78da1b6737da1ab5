/* Internal to the kernel sets: the driver of conv_nhwc.c (reference/conv_nhwc.c has the algorithm), after the
 * set's run_any (conv_nhwc_jobs.h). */
#ifndef BURNEDGE_CONV_NHWC_LOOPS_H
#define BURNEDGE_CONV_NHWC_LOOPS_H

#include "conv_nhwc_jobs.h"
#include "isa.h" /* BE_PAR_MIN_MACS */
#include "workers.h"

#ifndef NHWC_ROWS /* pixels per row panel with more than 8 out channels: the set's tile height (at most 8) */
#define NHWC_ROWS BE_MR
#endif
#ifndef NHWC_PANELS /* column panels per job on small planes: as many as the set's widest tile takes */
#define NHWC_PANELS 1
#endif

typedef struct {
    const conv_job *q;
    const be_conv_geo *g;
    const be_epi *e;
    int act;
} conv_nhwc_call;

static void conv_nhwc_jobs(void *ctx, int t, long lo, long hi) {
    const conv_nhwc_call *c = ctx;
    run_any(c->q, c->g, c->e, t, lo, hi, c->act);
}

static void conv_nhwc(const float *x, const float *wpack, float *y, const be_epi *e, const be_conv_geo *g, int flags,
                      float *scratch, int threads, int portable) {
    conv_job q;
    q.K = (long)g->C * g->KH * g->KW, q.M = g->M, q.ohw = (long)g->OH * g->OW;
    q.hp = be_conv_nhwc_hp(g), q.wp = be_conv_nhwc_wp(g), q.out_nhwc = (flags & BE_OUT_NHWC) != 0;
    q.wpack = wpack, q.y = y;
    float *s = scratch;
    if (be_conv_nhwc_padded(g, flags)) {
        const long img = q.hp * q.wp * g->C;
        be_nhwc_pad_images(x, flags & BE_IN_NHWC, g, q.hp, q.wp, s, threads);
        q.xp = s;
        s += (g->N * img + 15) / 16 * 16;
    } else {
        q.xp = x;
    }
    int *koff = (int *)s;
    for (int ky = 0, k = 0; ky < g->KH; ky++)
        for (int kx = 0; kx < g->KW; kx++) {
            const long tap = ((long)ky * g->dh * q.wp + (long)kx * g->dw) * g->C;
            for (int c = 0; c < g->C; c++, k++) koff[k] = (int)(tap + c);
        }
    q.koff = koff, q.slices = s + (q.K + 15) / 16 * 16, q.slice = 8 * BE_NR;
    q.rows = q.M <= 8 ? 8 : NHWC_ROWS;
    q.mp = (q.ohw + q.rows - 1) / q.rows, q.np = (q.M + BE_NR - 1) / BE_NR;
    int nt = threads < BE_DENSE_MAX_THREADS ? threads : BE_DENSE_MAX_THREADS;
    if ((double)g->N * q.ohw * q.M * q.K < BE_PAR_MIN_MACS) nt = 1;
    /* jobs: (image, row panel, block of column panels); blocks only when row panels cannot feed the threads */
    q.ncb = 1, q.pmajor = q.mp <= 16 && q.np > 1;
    if (q.pmajor) /* a weight panel (or the set's tile's NHWC_PANELS of them) meets every row panel while in L1 */
        q.ncb = (q.np + NHWC_PANELS - 1) / NHWC_PANELS;
    else if (nt > 1 && g->N * q.mp < 4 * nt)
        q.ncb = q.np < nt ? q.np : nt;
    q.jobs = g->N * q.mp * q.ncb;
    if (nt > q.jobs) nt = (int)q.jobs;
    /* the fast epilogue: alpha = beta = 1, a per-column bias, an NHWC residual, a vector activation */
    const int fast = e->alpha == 1.0f && (!e->add0 || (e->beta0 == 1.0f && e->rs0 == 0 && e->cs0 == 1)) &&
                     (!e->add1 || (e->rs1 == q.M && e->cs1 == 1)) && e->act <= BE_ACT_CLIP;
    const int act = portable ? -2 : fast ? e->act : -1;
    conv_nhwc_call c = {&q, g, e, act};
    be_parallel(nt, q.jobs, conv_nhwc_jobs, &c);
}

void be_conv_nhwc_f32(const float *x, const float *wpack, float *y, const be_epi *e, const be_conv_geo *g, int flags,
                      float *scratch, int threads) {
    conv_nhwc(x, wpack, y, e, g, flags, scratch, threads, 0);
}

void be_conv_nhwc_f32_portable(const float *x, const float *wpack, float *y, const be_epi *e, const be_conv_geo *g,
                               int flags, float *scratch, int threads) {
    conv_nhwc(x, wpack, y, e, g, flags, scratch, threads, 1);
}

#endif
