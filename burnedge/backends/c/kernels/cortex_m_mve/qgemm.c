/* int8 GEMM for Cortex-M cores with Helium (MVE): dot products along K with VMLADAVA on the B panels of
 * qgemm.h as they are, the requantisation of reference/qgemm.c (be_rq1, in 32-bit steps: rq32.h), so every result
 * is the reference's bit for bit.
 *
 * Why along K: MVE reduces a vector into a scalar accumulator in one instruction (16 int8 products for
 * VMLADAVA.S8), and a tile needs only 6 accumulators, not the 96 of the register tile of the other sets.
 * Algorithm (tile_rows: rows of raw int8 A, read in place; QMatMul's rows, the channels-last conv's gathered or
 * in-place pixel rows):
 *  1. per column c and 16 values of K: one halfword gather reads column c's 8 K pairs out of the B panel (kp*32
 *     bytes apart: 16 int8 in K order), predicated off past the panel's K pairs;
 *  2. each of the tile's rows loads its 16 A values (predicated off past K) and VMLADAVA adds the 16 products to
 *     its int32 accumulator (exact products; sums wrap modulo 2^32 as the reference's truncated int64 sum);
 *  3. QMatMul with a zero point a_zp: sum (a - a_zp) b = sum a b - a_zp sum b, the column sum by VADDVA once per
 *     column and step (equal modulo 2^32, so the wrapped results agree);
 *  4. per 4 columns, + bias and the rule in q registers (be_mve_rq_wide: VMULH, VRSHL) or be_rq1_32 per output.
 * be_qgemm_tile (int16-pair A panels: the NCHW conv's weights) gathers a row's 4 K pairs (8 int16) and column c's
 * 8 B values sign-extended to int16, and sums them with VMLADAVA.S16.
 */
#include "qgemm.h"
#include "cm_mve.h"
#include "cm_mve_qgemm.h"

static const uint16_t B_BYTES[8] = {0, 1, 32, 33, 64, 65, 96, 97}; /* 4 K pairs of a column, bytes */
static const uint16_t A_PAIRS[8] = {0, 1, 12, 13, 24, 25, 36, 37}; /* 4 K pairs of a row, int16 */

void be_qgemm_tile(long k2, const int16_t *a, const int8_t *b, int mr, int nr, int8_t *y, long ldy,
                   const be_qepi *e, long i0, long j0) {
    const uint16x8_t ob = vld1q_u16(B_BYTES), oa = vld1q_u16(A_PAIRS);
    for (int c = 0; c < nr; c++) {
        int32_t acc[BE_QMR] = {0};
        for (long kp = 0; kp < k2; kp += 4) {
            const mve_pred16_t p = vctp16q((uint32_t)(2 * (k2 - kp)));
            const int16x8_t bv = vldrbq_gather_offset_z_s16(b + kp * 32 + 2 * c, ob, p);
            for (int r = 0; r < mr; r++)
                acc[r] = vmladavaq_s16(acc[r], vldrhq_gather_shifted_offset_z_s16(a + (kp * BE_QMR + r) * 2, oa, p), bv);
        }
        for (int r = 0; r < mr; r++) {
            const long ch = e->per_col ? j0 + c : i0 + r;
            const uint32_t v = (uint32_t)acc[r] + (e->bias ? (uint32_t)e->bias[ch] : 0u);
            y[r * ldy + c] = be_rq1_32((int32_t)v, e->mult[ch], e->shift[ch], e->lim[ch], e->zp, e->lo, e->hi);
        }
    }
}

/* MVE tiles read A rows in place: QMatMul packs nothing (qgemm_loops.h's packing call becomes a no-op) */
#define pack_a_rows(a, lda, K, kread, zp, mr, dst) ((void)(dst))
#define QG_A_QUADS 1
#define QG_PACK_QUADS()
#define QG_TILE_QUADS()                                                                                         \
    tile_rows(K, a + i0 * lda, lda, a_zp, bpack + q * k2 * 32, mr, nr, y + i0 * ldy + j0, ldy, e, i0, j0); \
    continue;
#define QG_PANEL_PACK() ((void)kread, (void)apanel)
#define QG_PANEL_TILE() tile_rows(K, a, lda, 0, bpack + q * k2 * 32, mr, nr, y + j0, ldy, e, i0, j0)

#include "qgemm_loops.h"
