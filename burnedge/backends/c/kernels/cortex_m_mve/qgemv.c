/* int8 matrix products of a few rows for Cortex-M cores with Helium (be_qgemv_i8, qgemm.h: a lean plan's dense
 * layers, no scratch): reference/qgemv.c's rows read straight from A, through the VMLADAVA tile of qgemm.c
 * (cm_mve_qgemm.h), up to 6 rows per B panel pass; results are the reference's bit for bit. */
#include "cm_mve_qgemm.h"

void be_qgemv_i8(long M, long N, long K, const int8_t *a, long lda, const int8_t *bpack, int8_t *y, long ldy,
                 const be_qepi *e) {
    const long k2 = (K + 1) / 2, np = (N + BE_QNR - 1) / BE_QNR;
    for (long i0 = 0; i0 < M; i0 += BE_QMR) {
        const int mr = (int)(M - i0 < BE_QMR ? M - i0 : BE_QMR);
        for (long q = 0; q < np; q++) {
            const long j0 = q * BE_QNR;
            const int nr = (int)(N - j0 < BE_QNR ? N - j0 : BE_QNR);
            tile_rows(K, a + i0 * lda, lda, 0, bpack + q * k2 * 32, mr, nr, y + i0 * ldy + j0, ldy, e, i0, j0);
        }
    }
}
