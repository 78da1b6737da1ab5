/* int8 GEMM for Cortex-M cores with the DSP extension: the int16-pair tile of reference/qgemm.c with SMLAD, the
 * same panel layouts (qgemm.h), the same requantisation (be_rq1, in 32-bit steps: rq32.h), so every result is the
 * reference's bit for bit.
 *
 * Algorithm (tile, 3 rows x 2 columns of accumulators per pass: 6 int32 in registers beside the pointers):
 *  1. per K pair, one word of the B panel holds the pairs of two columns as bytes [c.b0, c.b1, c1.b0, c1.b1];
 *     SXTB16 (and SXTB16 of it rotated by 8) gives (c.b0, c1.b0) and (c.b1, c1.b1), two PKH-style merges give
 *     each column's pair (b0, b1) as two int16;
 *  2. an A word is already a row's pair (a0, a1) as two int16 (the A panel layout), so SMLAD adds
 *     a0 * b0 + a1 * b1 to the row's accumulator of each column: 4 products for 2 SMLAD, and the B unpacking is
 *     shared by the 3 rows. Products of |a| <= 255, |b| <= 128 are exact; the accumulator wraps modulo 2^32
 *     (SMLAD only sets the Q flag), as the reference's int64 sum truncated to 32 bits does;
 *  3. + bias, be_rq1_32 per output (qgemm.h's rule in 32-bit steps, rq32.h).
 * A single row (dense layers) takes 4 columns per pass instead, its A word loaded once for them.
 * Rows past mr are never computed; a last column group computes its zero-padded neighbours and drops them.
 * A panels are packed by pack_a_rows from raw int8 rows (minus the zero point) with 4-byte loads.
 */
#include "qgemm.h"
#include "cm_dsp.h"
#include "rq32.h"

/* acc[r][0..1] = rows r < ROWS (A words a[r], BE_QMR apart per pair) x columns c, c+1 of the B panel at b */
static BE_AI void tile_cols2(const int ROWS, long k2, const int16_t *a, const int8_t *b, int32_t acc[3][2]) {
    int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0, s20 = 0, s21 = 0;
    for (const int8_t *end = b + k2 * 32; b != end; a += 2 * BE_QMR, b += 32) {
        uint32_t p0, p1;
        be_cm_pairs(be_cm_ld32(b), &p0, &p1);
        const int32_t a0 = (int32_t)be_cm_ld32(a);
        s00 = __smlad(a0, (int16x2_t)p0, s00);
        s01 = __smlad(a0, (int16x2_t)p1, s01);
        if (ROWS > 1) {
            const int32_t a1 = (int32_t)be_cm_ld32(a + 2);
            s10 = __smlad(a1, (int16x2_t)p0, s10);
            s11 = __smlad(a1, (int16x2_t)p1, s11);
        }
        if (ROWS > 2) {
            const int32_t a2 = (int32_t)be_cm_ld32(a + 4);
            s20 = __smlad(a2, (int16x2_t)p0, s20);
            s21 = __smlad(a2, (int16x2_t)p1, s21);
        }
    }
    acc[0][0] = s00, acc[0][1] = s01, acc[1][0] = s10, acc[1][1] = s11, acc[2][0] = s20, acc[2][1] = s21;
}

/* acc[0..3] = one row (A words 2 * BE_QMR int16 apart) x columns c .. c+3 of the B panel at b: the A word
 * loaded once for 4 columns (QMatMul of one row: dense layers) */
static BE_AI void tile_row_cols4(long k2, const int16_t *a, const int8_t *b, int32_t acc[4]) {
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (const int8_t *end = b + k2 * 32; b != end; a += 2 * BE_QMR, b += 32) {
        uint32_t p0, p1, p2, p3;
        const int32_t av = (int32_t)be_cm_ld32(a);
        be_cm_pairs(be_cm_ld32(b), &p0, &p1);
        s0 = __smlad(av, (int16x2_t)p0, s0);
        s1 = __smlad(av, (int16x2_t)p1, s1);
        be_cm_pairs(be_cm_ld32(b + 4), &p2, &p3);
        s2 = __smlad(av, (int16x2_t)p2, s2);
        s3 = __smlad(av, (int16x2_t)p3, s3);
    }
    acc[0] = s0, acc[1] = s1, acc[2] = s2, acc[3] = s3;
}

void be_qgemm_tile(long k2, const int16_t *a, const int8_t *b, int mr, int nr, int8_t *y, long ldy,
                   const be_qepi *e, long i0, long j0) {
    /* the epilogue's fields in locals: int8 stores may alias the struct, which would reload them per output */
    const int32_t *bias = e->bias, *mult = e->mult, *shift = e->shift, *lim = e->lim;
    const int32_t zp = e->zp, lo = e->lo, hi = e->hi, per_col = e->per_col;
    if (mr == 1) { /* one row: 4 columns per pass */
        for (int c = 0; c < nr; c += 4) {
            int32_t acc[4];
            tile_row_cols4(k2, a, b + 2 * c, acc);
            for (int j = 0; j < 4 && c + j < nr; j++) {
                const long ch = per_col ? j0 + c + j : i0;
                const uint32_t v = (uint32_t)acc[j] + (bias ? (uint32_t)bias[ch] : 0u);
                y[c + j] = be_rq1_32((int32_t)v, mult[ch], shift[ch], lim[ch], zp, lo, hi);
            }
        }
        return;
    }
    for (int c = 0; c < nr; c += 2) {
        const int nc = nr - c < 2 ? nr - c : 2;
        for (int r0 = 0; r0 < mr; r0 += 3) {
            const int rows = mr - r0 < 3 ? mr - r0 : 3;
            int32_t acc[3][2];
            if (rows == 3)
                tile_cols2(3, k2, a + 2 * r0, b + 2 * c, acc);
            else if (rows == 2)
                tile_cols2(2, k2, a + 2 * r0, b + 2 * c, acc);
            else
                tile_cols2(1, k2, a + 2 * r0, b + 2 * c, acc);
            for (int j = 0; j < nc; j++) {
                int8_t *yc = y + r0 * ldy + c + j;
                if (per_col) { /* one channel per column: its parameters once for the rows */
                    const long ch = j0 + c + j;
                    const uint32_t bb = bias ? (uint32_t)bias[ch] : 0u;
                    const int32_t m = mult[ch], sh = shift[ch], l = lim[ch];
                    for (int r = 0; r < rows; r++)
                        yc[r * ldy] = be_rq1_32((int32_t)((uint32_t)acc[r][j] + bb), m, sh, l, zp, lo, hi);
                } else {
                    for (int r = 0; r < rows; r++) {
                        const long ch = i0 + r0 + r;
                        const uint32_t v = (uint32_t)acc[r][j] + (bias ? (uint32_t)bias[ch] : 0u);
                        yc[r * ldy] = be_rq1_32((int32_t)v, mult[ch], shift[ch], lim[ch], zp, lo, hi);
                    }
                }
            }
        }
    }
}

/* rows i0 .. i0+mr-1 of A (minus zp) as one A panel of int16 pairs, zero-padded past K and past mr rows */
static void pack_a_rows(const int8_t *a, long lda, long K, long kread, int32_t zp, int mr, int16_t *dst) {
    const long k2 = (K + 1) / 2, kq = K / 4;
    (void)kread;
    const uint32_t zz = ((uint32_t)zp & 0xFFFFu) * 0x10001u; /* zp in both halves */
    for (int r = 0; r < BE_QMR; r++) {
        int16_t *d = dst + 2 * r;
        if (r >= mr) {
            for (long kp = 0; kp < k2; kp++) memset(d + kp * 2 * BE_QMR, 0, 4);
            continue;
        }
        const int8_t *s = a + r * lda;
        for (long q = 0; q < kq; q++) { /* 4 bytes -> the pairs (k0, k1) and (k2, k3) */
            uint32_t lo, hi;
            be_cm_pairs(be_cm_ld32(s + 4 * q), &lo, &hi);
            lo = (uint32_t)__ssub16((int16x2_t)lo, (int16x2_t)zz);
            hi = (uint32_t)__ssub16((int16x2_t)hi, (int16x2_t)zz);
            memcpy(d + (2 * q) * 2 * BE_QMR, &lo, 4);
            memcpy(d + (2 * q + 1) * 2 * BE_QMR, &hi, 4);
        }
        for (long k = 4 * kq; k < 2 * k2; k++) /* the last 1-3 values, then the zero past K */
            d[(k / 2) * 2 * BE_QMR + (k & 1)] = (int16_t)(k < K ? s[k] - zp : 0);
    }
}

/* no quad path: int16-pair panels and be_qgemm_tile everywhere (qgemm_loops.h) */
#define QG_A_QUADS 0
#define QG_PACK_QUADS()
#define QG_TILE_QUADS()
#define QG_PANEL_PACK() pack_a_rows(a, lda, K, kread, 0, mr, (int16_t *)apanel)
#define QG_PANEL_TILE() be_qgemm_tile(k2, (const int16_t *)apanel, bpack + q * k2 * 32, mr, nr, y + j0, ldy, e, i0, j0)

#include "qgemm_loops.h"
