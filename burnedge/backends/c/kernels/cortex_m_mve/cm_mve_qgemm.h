/* Internal to the Cortex-M Helium kernel set: the int8 tile on raw A rows (qgemm.c has the algorithm), shared by
 * qgemm.c (QMatMul, the channels-last convs' row panels) and qgemv.c (a lean plan's few-row QMatMul). */
#ifndef BURNEDGE_CM_MVE_QGEMM_H
#define BURNEDGE_CM_MVE_QGEMM_H

#include "qgemm.h"
#include "cm_mve.h"
#include "rq32.h"

static const uint16_t B_PAIRS[8] = {0, 32, 64, 96, 128, 160, 192, 224}; /* 8 K pairs of a column, bytes */

/* + bias, requantise and store acc[r][j] (rows r < ROWS, columns c0 + j, j < nc <= 4; the zero point's column
 * term already taken off): per column channels (QMatMul, channels-last convs) 4 columns at once in q registers
 * when their shifts allow (be_mve_rq_wide), else one by one with be_rq1_32 (the epilogue's fields in locals first:
 * int8 stores may alias the struct) */
static BE_AI void store_cols(const int ROWS, const int32_t acc[BE_QMR][4], int c0, int nc, int8_t *y, long ldy,
                             const be_qepi *e, long i0, long j0) {
    const int32_t *bias = e->bias, *mult = e->mult, *shift = e->shift, *lim = e->lim;
    const int32_t zp = e->zp, lo = e->lo, hi = e->hi;
    if (e->per_col) {
        const long ch = j0 + c0; /* per-column arrays are padded to 16 channels */
        const int32x4_t s = vld1q_s32(shift + ch);
        if (be_mve_all_wide(s, nc)) {
            const int32x4_t m = vld1q_s32(mult + ch), down = vsubq_s32(vdupq_n_s32(32), s);
            const int32x4_t b = bias ? vld1q_s32(bias + ch) : vdupq_n_s32(0);
            const int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
            const mve_pred16_t keep = vctp32q((uint32_t)nc);
#pragma GCC unroll 6
            for (int r = 0; r < ROWS; r++)
                vstrbq_p_s32(y + r * ldy + c0, be_mve_rq_wide(vaddq_s32(vld1q_s32(acc[r]), b), m, down, zp, vlo, vhi),
                             keep);
            return;
        }
    }
    for (int r = 0; r < ROWS; r++)
        for (int j = 0; j < nc; j++) {
            const long ch = e->per_col ? j0 + c0 + j : i0 + r;
            const uint32_t v = (uint32_t)acc[r][j] + (bias ? (uint32_t)bias[ch] : 0u);
            y[r * ldy + c0 + j] = be_rq1_32((int32_t)v, mult[ch], shift[ch], lim[ch], zp, lo, hi);
        }
}

/* Y(ROWS x nr) = epilogue((A - a_zp) * B panel): row r of A at a + r*lda (K values, raw int8); columns in
 * groups of 4 for the epilogue */
static BE_AI void tile_rows_n(const int ROWS, long K, const int8_t *a, long lda, int32_t a_zp, const int8_t *b,
                              int nr, int8_t *y, long ldy, const be_qepi *e, long i0, long j0) {
    const uint16x8_t off = vld1q_u16(B_PAIRS);
    for (int c0 = 0; c0 < nr; c0 += 4) {
        const int nc = nr - c0 < 4 ? nr - c0 : 4;
        int32_t cols[BE_QMR][4];
        for (int j = 0; j < nc; j++) {
            int32_t acc[BE_QMR] = {0}, sum = 0;
            const int8_t *bc = b + 2 * (c0 + j);
            long k0 = 0;
            for (; k0 + 16 <= K; k0 += 16) { /* whole steps: no predicates */
                const int8x16_t bv =
                    vreinterpretq_s8_u16(vldrhq_gather_offset_u16((const uint16_t *)(bc + k0 * 16), off));
                const int8_t *ar = a + k0;
#pragma GCC unroll 6
                for (int r = 0; r < ROWS; r++, ar += lda) acc[r] = vmladavaq_s8(acc[r], vld1q_s8(ar), bv);
                if (a_zp) sum = vaddvaq_s8(sum, bv);
            }
            if (k0 < K) { /* the last 1-15 values of K */
                const mve_pred16_t pb = vctp16q((uint32_t)((K - k0 + 1) / 2)), pa = vctp8q((uint32_t)(K - k0));
                const int8x16_t bv =
                    vreinterpretq_s8_u16(vldrhq_gather_offset_z_u16((const uint16_t *)(bc + k0 * 16), off, pb));
                const int8_t *ar = a + k0;
#pragma GCC unroll 6
                for (int r = 0; r < ROWS; r++, ar += lda) acc[r] = vmladavaq_s8(acc[r], vldrbq_z_s8(ar, pa), bv);
                if (a_zp) sum = vaddvaq_s8(sum, bv);
            }
            const uint32_t zs = (uint32_t)a_zp * (uint32_t)sum;
#pragma GCC unroll 6
            for (int r = 0; r < ROWS; r++) cols[r][j] = (int32_t)((uint32_t)acc[r] - zs);
        }
        store_cols(ROWS, (const int32_t(*)[4])cols, c0, nc, y, ldy, e, i0, j0);
    }
}

static void tile_rows(long K, const int8_t *a, long lda, int32_t a_zp, const int8_t *b, int mr, int nr, int8_t *y,
                      long ldy, const be_qepi *e, long i0, long j0) {
    switch (mr) { /* the row count as a constant: the accumulators stay in registers */
    case 1: tile_rows_n(1, K, a, lda, a_zp, b, nr, y, ldy, e, i0, j0); break;
    case 2: tile_rows_n(2, K, a, lda, a_zp, b, nr, y, ldy, e, i0, j0); break;
    case 3: tile_rows_n(3, K, a, lda, a_zp, b, nr, y, ldy, e, i0, j0); break;
    case 4: tile_rows_n(4, K, a, lda, a_zp, b, nr, y, ldy, e, i0, j0); break;
    case 5: tile_rows_n(5, K, a, lda, a_zp, b, nr, y, ldy, e, i0, j0); break;
    default: tile_rows_n(BE_QMR, K, a, lda, a_zp, b, nr, y, ldy, e, i0, j0);
    }
}

#endif
