/* Internal to the kernel sets: the job loop of the int8 GEMM and its one-panel form (reference/qgemm.c has the
 * algorithm). A set's qgemm.c defines be_qgemm_tile and pack_a_rows (A rows minus a_zp as int16-pair panels)
 * first, and the hooks of a quad (sdot) path: QG_A_QUADS (does be_qgemm_i8 pack A as quads: 0 without one),
 * QG_PACK_QUADS() and QG_TILE_QUADS() (statements over its locals: the quad packing `else`, the quad tile then
 * continue), QG_PANEL_PACK() and QG_PANEL_TILE() (be_qgemm_panel's packing and tile), then includes this. */
#ifndef BURNEDGE_QGEMM_LOOPS_H
#define BURNEDGE_QGEMM_LOOPS_H

#include "qgemm.h"
#include "isa.h" /* BE_PAR_MIN_QMACS */
#include "workers.h"

typedef struct {
    long M, N, K, lda, k2, np, nchunks;
    const int8_t *a, *bpack;
    int8_t *y;
    long ldy;
    int32_t a_zp;
    const be_qepi *e;
    int16_t *scratch;
} qgemm_call;

/* jobs lo .. hi-1 (row panel p = job / nchunks, column chunk job % nchunks) on thread tid's A panel buffer */
static void qgemm_jobs(void *ctx, int tid, long lo, long hi) {
    const qgemm_call *c = ctx;
    const long M = c->M, N = c->N, K = c->K, lda = c->lda, k2 = c->k2, np = c->np, nchunks = c->nchunks;
    const int8_t *a = c->a, *bpack = c->bpack;
    int8_t *y = c->y;
    const long ldy = c->ldy;
    const int32_t a_zp = c->a_zp;
    const be_qepi *e = c->e;
    int16_t *ap = c->scratch + (long)tid * k2 * BE_QMR * 2;
    long packed = -1;
    for (long job = lo; job < hi; job++) {
        const long p = job / nchunks, ch = job % nchunks;
        const long i0 = p * BE_QMR;
        const int mr = (int)(M - i0 < BE_QMR ? M - i0 : BE_QMR);
        const int quads = QG_A_QUADS; /* A panels as int8 quads for the set's sdot tile */
        if (packed != p) {
            QG_PACK_QUADS()
            pack_a_rows(a + i0 * lda, lda, K, K, a_zp, mr, ap);
            packed = p;
        }
        const long q0 = np * ch / nchunks, q1 = np * (ch + 1) / nchunks;
        for (long q = q0; q < q1; q++) {
            const long j0 = q * BE_QNR;
            const int nr = (int)(N - j0 < BE_QNR ? N - j0 : BE_QNR);
            QG_TILE_QUADS()
            (void)quads;
            be_qgemm_tile(k2, ap, bpack + q * k2 * 32, mr, nr, y + i0 * ldy + j0, ldy, e, i0, j0);
        }
    }
}

void be_qgemm_i8(long M, long N, long K, const int8_t *a, long lda, int32_t a_zp, const int8_t *bpack, int8_t *y,
                 long ldy, const be_qepi *e, int16_t *scratch, int threads) {
    const long k2 = (K + 1) / 2, mp = (M + BE_QMR - 1) / BE_QMR, np = (N + BE_QNR - 1) / BE_QNR;
    int nt = threads < BE_Q_MAX_THREADS ? threads : BE_Q_MAX_THREADS;
    if ((double)M * N * K < BE_PAR_MIN_QMACS) nt = 1;
    /* split columns when there are too few row panels to feed the threads */
    long nchunks = 1;
    if (nt > 1 && mp < 2 * nt) nchunks = np < 2 * nt ? np : 2 * nt;
    const long jobs = mp * nchunks;
    if (nt > jobs) nt = (int)jobs;
    qgemm_call c = {M, N, K, lda, k2, np, nchunks, a, bpack, y, ldy, a_zp, e, scratch};
    be_parallel(nt, jobs, qgemm_jobs, &c);
}

void be_qgemm_panel(const int8_t *a, long lda, long K, long kread, int mr, long N, const int8_t *bpack, int8_t *y,
                    long ldy, const be_qepi *e, long i0, void *apanel) {
    const long k2 = (K + 1) / 2, np = (N + BE_QNR - 1) / BE_QNR;
    QG_PANEL_PACK();
    for (long q = 0; q < np; q++) {
        const long j0 = q * BE_QNR;
        const int nr = (int)(N - j0 < BE_QNR ? N - j0 : BE_QNR);
        QG_PANEL_TILE();
    }
}

#endif
