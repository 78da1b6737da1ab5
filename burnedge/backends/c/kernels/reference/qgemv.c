/* int8 matrix products of a few rows, each row read straight from A: no packed A panel, so no scratch. A lean plan
 * (a microcontroller's: one thread, the least memory) lowers a QMatMul of fewer than BE_QMR rows to it, where
 * be_qgemm_i8 would pack a whole BE_QMR-row panel of int16 pairs (12 bytes per K: 7.5 KiB for K = 640).
 *
 * The same B panels, accumulation (exact, wrapping to 32 bits as be_qgemm_tile's int64 sum does when it is cast)
 * and epilogue as be_qgemm_i8, so the results are its own bit for bit.
 */
#include "qgemm.h"

void be_qgemv_i8(long M, long N, long K, const int8_t *a, long lda, const int8_t *bpack, int8_t *y, long ldy,
                 const be_qepi *e) {
    const long k2 = (K + 1) / 2, np = (N + BE_QNR - 1) / BE_QNR;
    for (long i = 0; i < M; i++) {
        const int8_t *ai = a + i * lda;
        for (long q = 0; q < np; q++) {
            const int8_t *bq = bpack + q * k2 * 32;
            const long j0 = q * BE_QNR;
            const int nr = (int)(N - j0 < BE_QNR ? N - j0 : BE_QNR);
            uint32_t acc[BE_QNR];
            for (int c = 0; c < BE_QNR; c++) acc[c] = 0u;
            for (long kp = 0; kp < k2; kp++) {
                const int32_t a0 = ai[2 * kp], a1 = 2 * kp + 1 < K ? ai[2 * kp + 1] : 0;
                const int8_t *bp = bq + kp * 32;
                for (int c = 0; c < BE_QNR; c++) acc[c] += (uint32_t)(a0 * bp[2 * c] + a1 * bp[2 * c + 1]);
            }
            for (int c = 0; c < nr; c++) {
                const long ch = e->per_col ? j0 + c : i;
                const uint32_t v = acc[c] + (e->bias ? (uint32_t)e->bias[ch] : 0u);
                y[i * ldy + j0 + c] = be_rq1((int32_t)v, e->mult[ch], e->shift[ch], e->lim[ch], e->zp, e->lo, e->hi);
            }
        }
    }
}
