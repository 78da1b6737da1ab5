/* Internal to the kernel sets: the job loop of the int8 GEMM conv (reference/qconv.c has the algorithm). A set's
 * qconv.c defines, after qconv_im2col.h: interleave (a K x 16 block into its B panel layout), PANEL_BYTES(K),
 * weight_panel (what a 6-row weight panel becomes once per job: nothing, or int8 quads into aq) and panel_tile
 * (the micro-kernel on a weight panel and a B panel), then includes this. */
#ifndef BURNEDGE_QCONV_LOOPS_H
#define BURNEDGE_QCONV_LOOPS_H

#include "qconv.h"
#include "isa.h" /* BE_PAR_MIN_QMACS */
#include "workers.h"

typedef struct {
    const int8_t *x;
    const int16_t *wpack;
    int8_t *y;
    const be_qepi *e;
    const be_qconv_geo *g;
    int32_t x_zp;
    int8_t *scratch;
    int cg, mg;
    long K, k2, hw, ohw;
    int direct;
    long np, mp, nb, nblk, ps, mchunks;
} qconv_call;

/* jobs lo .. hi-1: (image and group, block of column panels, chunk of weight row panels) on thread tid's slice */
static void qconv_jobs(void *ctx, int tid, long lo, long hi) {
    const qconv_call *c = ctx;
    const int8_t *x = c->x;
    const int16_t *wpack = c->wpack;
    int8_t *y = c->y, *scratch = c->scratch;
    const be_qepi *e = c->e;
    const be_qconv_geo *g = c->g;
    const int32_t x_zp = c->x_zp;
    const int cg = c->cg, mg = c->mg, direct = c->direct;
    const long K = c->K, k2 = c->k2, hw = c->hw, ohw = c->ohw, np = c->np, mp = c->mp, nb = c->nb, nblk = c->nblk;
    const long ps = c->ps, mchunks = c->mchunks;
    int8_t *plain = scratch + (long)tid * be_qconv_slice(K);
    int8_t *panels = plain + K * BE_QNR, *aq = panels + nb * ps;
    (void)aq;
    long packed = -1; /* the block whose B panels the slice holds: a chunk's next job often shares it */
    for (long job = lo; job < hi; job++) {
        const long mc = job % mchunks, rest = job / mchunks;
        const long blk = rest % nblk, ng = rest / nblk;
        const int n = (int)(ng / g->G), gi = (int)(ng % g->G);
        const long q0 = blk * nb, q1 = q0 + nb < np ? q0 + nb : np;
        const int8_t *xg = x + ((long)n * g->C + (long)gi * cg) * hw;
        for (long q = q0; q < q1 && packed != rest; q++) {
            const long j0 = q * BE_QNR;
            const int nr = (int)(ohw - j0 < BE_QNR ? ohw - j0 : BE_QNR);
            int8_t *dst = panels + (q - q0) * ps;
            if (direct && nr == BE_QNR) {
                interleave(xg + j0, hw, K, dst);
            } else if (direct) {
                for (long k = 0; k < K; k++) {
                    memcpy(plain + k * BE_QNR, xg + k * hw + j0, (size_t)nr);
                    memset(plain + k * BE_QNR + nr, (int8_t)x_zp, BE_QNR - nr);
                }
                interleave(plain, BE_QNR, K, dst);
            } else {
                im2col_plain(xg, g, cg, j0, nr, (int8_t)x_zp, plain);
                interleave(plain, BE_QNR, K, dst);
            }
        }
        packed = rest;
        int8_t *yimg = y + (long)n * g->M * ohw;
        const int16_t *wg = wpack + (long)gi * mp * BE_QMR * k2 * 2;
        const long p0 = mp * mc / mchunks, p1 = mp * (mc + 1) / mchunks;
        for (long p = p0; p < p1; p++) {
            const long i0 = (long)gi * mg + p * BE_QMR;
            const int mr = (int)(mg - p * BE_QMR < BE_QMR ? mg - p * BE_QMR : BE_QMR);
            const int16_t *wp = wg + p * BE_QMR * k2 * 2;
            weight_panel(wp, k2, aq);
            for (long q = q0; q < q1; q++) {
                const long j0 = q * BE_QNR;
                const int nr = (int)(ohw - j0 < BE_QNR ? ohw - j0 : BE_QNR);
                panel_tile(k2, wp, aq, panels + (q - q0) * ps, mr, nr, yimg + i0 * ohw + j0, ohw, e, i0, j0);
            }
        }
    }
}

void be_qconv2d_i8(const int8_t *x, const int16_t *wpack, int8_t *y, const be_qepi *e, const be_qconv_geo *g,
                   int32_t x_zp, int8_t *scratch, int threads) {
    const int cg = g->C / g->G, mg = g->M / g->G;
    const long K = (long)cg * g->KH * g->KW, k2 = (K + 1) / 2, hw = (long)g->H * g->W, ohw = (long)g->OH * g->OW;
    const int direct = g->KH == 1 && g->KW == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0 &&
                       g->OH == g->H && g->OW == g->W;
    const long np = (ohw + BE_QNR - 1) / BE_QNR, mp = (mg + BE_QMR - 1) / BE_QMR, nb = be_qconv_nb(K);
    const long nblk = (np + nb - 1) / nb, blocks = (long)g->N * g->G * nblk, ps = PANEL_BYTES(K);
    int nt = threads < BE_Q_MAX_THREADS ? threads : BE_Q_MAX_THREADS;
    if ((double)g->N * g->M * ohw * K < BE_PAR_MIN_QMACS) nt = 1;
    long mchunks = 1;
    if (nt > 1 && blocks < 2 * nt) mchunks = mp < nt ? mp : nt;
    const long jobs = blocks * mchunks;
    if (nt > jobs) nt = (int)jobs;
    qconv_call c = {x, wpack, y, e, g, x_zp, scratch, cg, mg, K, k2, hw, ohw, direct, np, mp, nb, nblk, ps, mchunks};
    be_parallel(nt, jobs, qconv_jobs, &c);
}

#endif
