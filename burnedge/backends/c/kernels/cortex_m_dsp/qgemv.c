/* int8 matrix products of a few rows for Cortex-M cores with the DSP extension (be_qgemv_i8, qgemm.h: a lean
 * plan's dense layers, no scratch): reference/qgemv.c's rows read straight from A, with SMLAD; results are the
 * reference's bit for bit (exact products, sums wrapping to 32 bits, be_rq1_32: qgemm.h's rule in 32-bit steps).
 *
 * Per row and 4 columns of a B panel: per 4 values of A (one word), SXTB16 and PKH make its two int16 pairs
 * (a0, a1), (a2, a3); per K pair, two B words give the 4 columns' pairs (be_cm_pairs) and 4 SMLAD add
 * a0 * b0 + a1 * b1 to each column's sum. An odd K's last pair reads one A value and a zero.
 */
#include "qgemm.h"
#include "cm_dsp.h"
#include "rq32.h"

/* one K pair of the 4 columns at b: acc[j] += (a0, a1) . (B(2kp, j), B(2kp+1, j)) */
static BE_AI void pair_step(uint32_t av, const int8_t *b, int32_t acc[4]) {
    uint32_t p0, p1, p2, p3;
    be_cm_pairs(be_cm_ld32(b), &p0, &p1);
    be_cm_pairs(be_cm_ld32(b + 4), &p2, &p3);
    acc[0] = __smlad((int32_t)av, (int16x2_t)p0, acc[0]);
    acc[1] = __smlad((int32_t)av, (int16x2_t)p1, acc[1]);
    acc[2] = __smlad((int32_t)av, (int16x2_t)p2, acc[2]);
    acc[3] = __smlad((int32_t)av, (int16x2_t)p3, acc[3]);
}

void be_qgemv_i8(long M, long N, long K, const int8_t *a, long lda, const int8_t *bpack, int8_t *y, long ldy,
                 const be_qepi *e) {
    const int32_t *bias = e->bias, *mult = e->mult, *shift = e->shift, *lim = e->lim;
    const int32_t zp = e->zp, lo = e->lo, hi = e->hi, per_col = e->per_col;
    const long k2 = (K + 1) / 2, kq = K / 4;
    for (long i = 0; i < M; i++) {
        const int8_t *ai = a + i * lda;
        for (long j0 = 0; j0 < N; j0 += 4) { /* 4 columns of the panel (zero-padded past N) */
            const int8_t *b = bpack + (j0 / BE_QNR) * k2 * 32 + 2 * (j0 % BE_QNR);
            int32_t acc[4] = {0, 0, 0, 0};
            for (long q = 0; q < kq; q++, b += 64) {
                uint32_t a01, a23;
                be_cm_pairs(be_cm_ld32(ai + 4 * q), &a01, &a23);
                pair_step(a01, b, acc);
                pair_step(a23, b + 32, acc);
            }
            for (long kp = 2 * kq; kp < k2; kp++, b += 32) { /* the last one or two values */
                const int32_t a0 = ai[2 * kp], a1 = 2 * kp + 1 < K ? ai[2 * kp + 1] : 0;
                pair_step(((uint32_t)a0 & 0xFFFFu) | ((uint32_t)a1 << 16), b, acc);
            }
            for (int j = 0; j < 4 && j0 + j < N; j++) {
                const long ch = per_col ? j0 + j : i;
                const uint32_t v = (uint32_t)acc[j] + (bias ? (uint32_t)bias[ch] : 0u);
                y[i * ldy + j0 + j] = be_rq1_32((int32_t)v, mult[ch], shift[ch], lim[ch], zp, lo, hi);
            }
        }
    }
}
