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

/* one K pair of the 4 columns at b: s_j += (a0, a1) . (B(2kp, j), B(2kp+1, j)), on locals s0..s3 */
#define PAIR_STEP(av, b)                                                                                     \
    do {                                                                                                     \
        uint32_t p0_, p1_, p2_, p3_;                                                                         \
        be_cm_pairs(be_cm_ld32(b), &p0_, &p1_);                                                              \
        be_cm_pairs(be_cm_ld32((b) + 4), &p2_, &p3_);                                                        \
        s0 = __smlad((int32_t)(av), (int16x2_t)p0_, s0), s1 = __smlad((int32_t)(av), (int16x2_t)p1_, s1);    \
        s2 = __smlad((int32_t)(av), (int16x2_t)p2_, s2), s3 = __smlad((int32_t)(av), (int16x2_t)p3_, s3);    \
    } while (0)

void be_qgemv_i8(long M, long N, long K, const int8_t *a, long lda, const int8_t *bpack, int8_t *y, long ldy,
                 const be_qepi *e) {
    const int32_t *bias = e->bias, *mult = e->mult, *shift = e->shift, *lim = e->lim;
    const int32_t zp = e->zp, lo = e->lo, hi = e->hi, per_col = e->per_col;
    const long k2 = (K + 1) / 2, kq = K / 4;
    for (long i = 0; i < M; i++) {
        const int8_t *ai = a + i * lda;
        for (long j0 = 0; j0 < N; j0 += 4) { /* 4 columns of the panel (zero-padded past N) */
            const int8_t *b = bpack + (j0 / BE_QNR) * k2 * 32 + 2 * (j0 % BE_QNR);
            int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (long q = 0; q < kq; q++, b += 64) {
                uint32_t a01, a23;
                be_cm_pairs(be_cm_ld32(ai + 4 * q), &a01, &a23);
                PAIR_STEP(a01, b);
                PAIR_STEP(a23, b + 32);
            }
            for (long kp = 2 * kq; kp < k2; kp++, b += 32) { /* the last one or two values */
                const int32_t a0 = ai[2 * kp], a1 = 2 * kp + 1 < K ? ai[2 * kp + 1] : 0;
                PAIR_STEP(((uint32_t)a0 & 0xFFFFu) | ((uint32_t)a1 << 16), b);
            }
            const int32_t acc[4] = {s0, s1, s2, s3};
            for (int j = 0; j < 4 && j0 + j < N; j++) {
                const long ch = per_col ? j0 + j : i;
                const uint32_t v = (uint32_t)acc[j] + (bias ? (uint32_t)bias[ch] : 0u);
                y[i * ldy + j0 + j] = be_rq1_32((int32_t)v, mult[ch], shift[ch], lim[ch], zp, lo, hi);
            }
        }
    }
}
