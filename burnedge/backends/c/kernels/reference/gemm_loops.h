/* Internal to the kernel sets: what every set's gemm.c shares (reference/gemm.c has the algorithm): B panel packing
 * and the job loop over tiles. A set's gemm.c defines be_gemm_tile, then includes this; a set that also defines
 * BE_GEMM_TILE2 and be_gemm_tile2 gets the panels of a job two at a time (an odd last one through be_gemm_tile). */
#ifndef BURNEDGE_GEMM_LOOPS_H
#define BURNEDGE_GEMM_LOOPS_H

#include "gemm.h"
#include "isa.h" /* BE_PAR_MIN_MACS */
#include "workers.h"

void be_gemm_pack_b(long K, const float *b, long rsb, long csb, long j0, int nr, float *dst) {
    for (long k = 0; k < K; k++) {
        const float *src = b + k * rsb + j0 * csb;
        float *d = dst + k * BE_NR;
        int j = 0;
        if (csb == 1)
            for (; j < nr; j++) d[j] = src[j];
        else
            for (; j < nr; j++) d[j] = src[j * csb];
        for (; j < BE_NR; j++) d[j] = 0.0f;
    }
}

typedef struct {
    long M, N, K, rsa, csa, rsb, csb, ldc, np, mp, nb, mchunks, jobs;
    const float *a, *b;
    float *c, *scratch;
    const be_epi *e;
    int a_packed, b_packed;
} gemm_call;

/* jobs [lo, hi) on thread t (its scratch slice) */
static void gemm_jobs(void *ctx, int t, long lo, long hi) {
    const gemm_call *g = ctx;
    const long K = g->K, M = g->M, N = g->N, np = g->np, mp = g->mp, nb = g->nb, mchunks = g->mchunks;
    float *slice = g->scratch ? g->scratch + (long)t * be_gemm_slice(K) : 0;
    for (long job = lo; job < hi; job++) {
        const long blk = job / mchunks, mc = job % mchunks;
        const long q0 = blk * nb, q1 = q0 + nb < np ? q0 + nb : np;
        const float *bp[16];
        long ldb[16];
        for (long q = q0; q < q1; q++) {
            const long j0 = q * BE_NR;
            const int nr = (int)(N - j0 < BE_NR ? N - j0 : BE_NR);
            ldb[q - q0] = BE_NR;
            if (g->b_packed) {
                bp[q - q0] = g->b + q * BE_NR * K;
            } else if (g->csb == 1 && nr == BE_NR) {
                bp[q - q0] = g->b + j0;
                ldb[q - q0] = g->rsb;
            } else {
                /* row-major B copies only its partial last panel: into the slice's first panel */
                float *dst = slice + (g->csb == 1 ? 0 : q - q0) * K * BE_NR;
                bp[q - q0] = dst;
                be_gemm_pack_b(K, g->b, g->rsb, g->csb, j0, nr, dst);
            }
        }
        const long p0 = mp * mc / mchunks, p1 = mp * (mc + 1) / mchunks;
        for (long p = p0; p < p1; p++) {
            const long i0 = p * BE_MR;
            const int mr = (int)(M - i0 < BE_MR ? M - i0 : BE_MR);
            const float *ap = g->a_packed ? g->a + p * BE_MR * K : g->a + i0 * g->rsa;
            const long ra = g->a_packed ? 1 : g->rsa, ca = g->a_packed ? BE_MR : g->csa;
            for (long q = q0; q < q1; q++) {
                const long j0 = q * BE_NR;
                const int nr = (int)(N - j0 < BE_NR ? N - j0 : BE_NR);
#ifdef BE_GEMM_TILE2 /* the set's tile of two panels at once (x86 AVX-512: 6x32 on zmm) */
                if (q + 1 < q1) {
                    const int nr2 = (int)(N - j0 < 2 * BE_NR ? N - j0 : 2 * BE_NR);
                    be_gemm_tile2(K, ap, ra, ca, mr, bp[q - q0], ldb[q - q0], bp[q + 1 - q0], ldb[q + 1 - q0], nr2,
                                  g->c + i0 * g->ldc + j0, g->ldc, g->e, i0, j0);
                    q++;
                    continue;
                }
#endif
                be_gemm_tile(K, ap, ra, ca, mr, bp[q - q0], ldb[q - q0], nr, g->c + i0 * g->ldc + j0, g->ldc, g->e,
                             i0, j0);
            }
        }
    }
}

void be_gemm_f32(long M, long N, long K, const float *a, long rsa, long csa, int a_packed, const float *b, long rsb,
                 long csb, int b_packed, float *c, long ldc, const be_epi *e, float *scratch, int threads) {
    if (M <= 0 || N <= 0) return;
    gemm_call g = {M, N, K, rsa, csa, rsb, csb, ldc, 0, 0, 0, 1, 0, a, b, c, scratch, e, a_packed, b_packed};
    g.np = (N + BE_NR - 1) / BE_NR, g.mp = (M + BE_MR - 1) / BE_MR, g.nb = be_gemm_nb(K);
#ifdef BE_GEMM_TILE2 /* blocks of at least a pair when no panel but a partial last one is copied into scratch */
    if (g.nb < 2 && (b_packed || csb == 1)) g.nb = 2;
#endif
    const long blocks = (g.np + g.nb - 1) / g.nb;
    int nt = threads < BE_DENSE_MAX_THREADS ? threads : BE_DENSE_MAX_THREADS;
    if ((double)M * N * K < BE_PAR_MIN_MACS) nt = 1;
    /* jobs: blocks of column panels, times row chunks when the blocks alone cannot feed the threads */
    if (nt > 1 && blocks < 2 * nt) g.mchunks = g.mp < nt ? g.mp : nt;
    g.jobs = blocks * g.mchunks;
    if (nt > g.jobs) nt = (int)g.jobs;
    be_parallel(nt, g.jobs, gemm_jobs, &g);
}

#endif
