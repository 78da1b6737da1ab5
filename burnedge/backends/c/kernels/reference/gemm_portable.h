/* Internal to the kernel sets: the portable GEMM tile (be_gemm_tile_portable), which every set's gemm.c defines
 * first (reference/gemm.c has the algorithm); gemm_loops.h holds the rest they share. */
#ifndef BURNEDGE_GEMM_PORTABLE_H
#define BURNEDGE_GEMM_PORTABLE_H

#include "gemm.h"

/* ---- portable tile -------------------------------------------------------------------------------------- */
void be_gemm_tile_portable(long K, const float *a, long rsa, long csa, int mr, const float *b, long ldb, int nr,
                           float *c, long ldc, const be_epi *e, long i0, long j0) {
    float acc[BE_MR][BE_NR];
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < BE_NR; j++) acc[r][j] = 0.0f;
    for (long k = 0; k < K; k++) {
        const float *bk = b + k * ldb;
        for (int r = 0; r < mr; r++) {
            const float av = a[r * rsa + k * csa];
            for (int j = 0; j < BE_NR; j++) acc[r][j] += av * bk[j];
        }
    }
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nr; j++) c[r * ldc + j] = be_epi_apply(e, acc[r][j], i0 + r, j0 + j);
}

#endif
