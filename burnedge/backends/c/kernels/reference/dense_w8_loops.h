/* Internal to the kernel sets: be_gemm_w8_f32's driver (reference/dense_w8.c has the algorithm). A set's
 * dense_w8.c defines gemv_w8_panel (up to W8_ROWS rows of one 16-column panel, the weights dequantized as they are
 * used), then includes this. */
#ifndef BURNEDGE_DENSE_W8_LOOPS_H
#define BURNEDGE_DENSE_W8_LOOPS_H

#include "dense_w8.h"
#include "isa.h" /* BE_PAR_MIN_MACS */
#include "workers.h"

#define W8_ROWS 4 /* rows of the GEMV tile */

/* acc[r][j] = sum_k a_r[k*csa] * ((q(k, j) - z[j]) * s[j]) for the W8_ROWS rows a_r (mr of them real), over one
 * K x 16 panel q */
static void gemv_w8_panel(const float *const *ar, int mr, long csa, long K, const int8_t *q, const float *s,
                          const float *z, float acc[W8_ROWS][BE_NR]);

typedef struct {
    long M, N, K;
    const float *a;
    long rsa, csa;
    const int8_t *bq;
    const float *scale, *zero;
    float *c;
    long ldc;
    const be_epi *e;
} gemv_w8_call;

/* 16-column panels lo .. hi-1, every row */
static void gemv_w8_panels(void *ctx, int tid, long lo, long hi) {
    const gemv_w8_call *g = ctx;
    const long M = g->M, N = g->N, K = g->K, rsa = g->rsa, csa = g->csa, ldc = g->ldc;
    const float *a = g->a, *scale = g->scale, *zero = g->zero;
    const int8_t *bq = g->bq;
    float *c = g->c;
    const be_epi *e = g->e;
    (void)tid;
    for (long p = lo; p < hi; p++) {
        const long j0 = p * BE_NR;
        const int nr = N - j0 < BE_NR ? (int)(N - j0) : BE_NR;
        for (long r0 = 0; r0 < M; r0 += W8_ROWS) {
            const float *ar[W8_ROWS]; /* rows past M repeat the last one; their sums are not stored */
            for (int r = 0; r < W8_ROWS; r++) ar[r] = a + (r0 + r < M ? r0 + r : M - 1) * rsa;
            float acc[W8_ROWS][BE_NR];
            const int mr = M - r0 < W8_ROWS ? (int)(M - r0) : W8_ROWS;
            gemv_w8_panel(ar, mr, csa, K, bq + p * K * BE_NR, scale + j0, zero + j0, acc);
            for (int r = 0; r < mr; r++)
                for (int j = 0; j < nr; j++) c[(r0 + r) * ldc + j0 + j] = be_epi_apply(e, acc[r][j], r0 + r, j0 + j);
        }
    }
}

static void gemv_w8(long M, long N, long K, const float *a, long rsa, long csa, const int8_t *bq, const float *scale,
                    const float *zero, float *c, long ldc, const be_epi *e, int threads) {
    const long panels = (N + BE_NR - 1) / BE_NR;
    int nt = threads < BE_DENSE_MAX_THREADS ? threads : BE_DENSE_MAX_THREADS;
    if ((double)M * N * K < BE_PAR_MIN_MACS) nt = 1;
    if (nt > panels) nt = (int)panels;
    gemv_w8_call g = {M, N, K, a, rsa, csa, bq, scale, zero, c, ldc, e};
    be_parallel(nt, panels, gemv_w8_panels, &g);
}

void be_gemm_w8_f32(long M, long N, long K, const float *a, long rsa, long csa, const int8_t *bq,
                    const float *scale, const float *zero, float *c, long ldc, const be_epi *e, float *scratch,
                    int threads) {
    if (M <= BE_W8_GEMV_ROWS) {
        gemv_w8(M, N, K, a, rsa, csa, bq, scale, zero, c, ldc, e, threads);
        return;
    }
    const long panels = (N + BE_NR - 1) / BE_NR, nb = be_gemm_w8_nb(K);
    for (long p0 = 0; p0 < panels; p0 += nb) {
        const long np = panels - p0 < nb ? panels - p0 : nb, j0 = p0 * BE_NR;
        const long cols = N - j0 < np * BE_NR ? N - j0 : np * BE_NR;
        for (long p = 0; p < np; p++) { /* the block's panels as floats */
            const float *s = scale + j0 + p * BE_NR, *z = zero + j0 + p * BE_NR;
            const int8_t *q = bq + (p0 + p) * K * BE_NR;
            float *d = scratch + p * K * BE_NR;
            for (long k = 0; k < K * BE_NR; k += BE_NR)
                for (int j = 0; j < BE_NR; j++) d[k + j] = ((float)q[k + j] - z[j]) * s[j];
        }
        be_epi eb = *e;
        if (eb.add0) eb.add0 += j0 * eb.cs0;
        if (eb.add1) eb.add1 += j0 * eb.cs1;
        be_gemm_f32(M, cols, K, a, rsa, csa, 0, scratch, 0, 0, 1, c + j0, ldc, &eb, 0, threads);
    }
}

#endif
