/* int8 GEMM: a 6x16 micro-kernel on int16 pairs (_mm256_madd_epi16: exact, no saturation) with the
 * requantising epilogue in registers, a portable C twin, and QMatMul's loop around it.
 *
 * Algorithm (tile):
 *  1. 12 ymm int32 accumulators (6 rows x 16 columns); per K pair: two B loads of 16 int8 sign-extended to
 *     int16, one 32-bit broadcast of each row's int16 pair, one madd + add per accumulator. Every product of
 *     int16 values in [-255, 255] x [-128, 127] is exact and pairs sum in int32; accumulators wrap modulo 2^32,
 *     so they equal the exact sum whenever it fits int32 (which the spec requires). A tile of at most 8 columns
 *     keeps 6 accumulators and one B load (8-channel stems and the last panel of M % 16 <= 8 columns).
 *  2. Epilogue: + bias (per row or per column), requantise 8 lanes at a time (qgemm.h `be_rq8`), pack to int8
 *     with saturation, clamp to [lo, hi], store the tile's nr columns.
 * QMatMul: jobs are (6-row panel, range of column panels); a job packs its rows of A (minus a_zp) as int16 pairs
 * into its thread's scratch slice, then runs the tiles. Integer sums do not depend on the thread count.
 * ARM: the same tile with vmlal_lane_s16 (int16 x int16 -> int32, exact; 16 columns per pass on aarch64, 8 on
 * armv7 for its 16 registers) and, with dotprod, sdot on int8 quads (4 products per lane and instruction, exact
 * int32 sums); QMatMul then packs raw int8 A quads (the lowering folds a_zp into the bias; a nonzero a_zp keeps
 * the int16 tile). The NEON epilogue is the rule itself: 64-bit vmull_s32 products and flooring shifts.
 */
#include "qgemm.h"

static void tile_portable(long k2, const int16_t *a, const int8_t *b, int mr, int nr, int8_t *y, long ldy,
                          const be_qepi *e, long i0, long j0) {
    for (int r = 0; r < mr; r++) {
        for (int c = 0; c < nr; c++) {
            int64_t acc = 0;
            for (long kp = 0; kp < k2; kp++) {
                const int16_t *ap = a + (kp * BE_QMR + r) * 2;
                const int8_t *bp = b + kp * 32 + 2 * c;
                acc += (int64_t)ap[0] * bp[0] + (int64_t)ap[1] * bp[1];
            }
            const long ch = e->per_col ? j0 + c : i0 + r;
            uint32_t v = (uint32_t)acc + (e->bias ? (uint32_t)e->bias[ch] : 0u);
            y[r * ldy + c] = be_rq1((int32_t)v, e->mult[ch], e->shift[ch], e->lim[ch], e->zp, e->lo, e->hi);
        }
    }
}

void be_qgemm_tile(long k2, const int16_t *a, const int8_t *b, int mr, int nr, int8_t *y, long ldy,
                   const be_qepi *e, long i0, long j0) {
    tile_portable(k2, a, b, mr, nr, y, ldy, e, i0, j0);
}

/* rows i0 .. i0+mr-1 of A (minus zp) as one A panel of int16 pairs, zero-padded past K (x86: junk may take the
 * place of the zeros when kread > K: the bytes a row may be read to; products with the B panels' zero padding stay
 * 0 and pairs past the panel are not stored) */
static void pack_a_rows(const int8_t *a, long lda, long K, long kread, int32_t zp, int mr, int16_t *dst) {
    const long k2 = (K + 1) / 2;
    long kp = 0;
    (void)kread;
    for (; kp < k2; kp++) {
        int16_t *d = dst + kp * BE_QMR * 2;
        for (int r = 0; r < BE_QMR; r++) {
            const long k = 2 * kp;
            d[2 * r] = (int16_t)(r < mr ? a[r * lda + k] - zp : 0);
            d[2 * r + 1] = (int16_t)(r < mr && k + 1 < K ? a[r * lda + k + 1] - zp : 0);
        }
    }
}

/* no quad path: int16-pair panels and be_qgemm_tile everywhere (qgemm_loops.h) */
#define QG_A_QUADS 0
#define QG_PACK_QUADS()
#define QG_TILE_QUADS()
#define QG_PANEL_PACK() pack_a_rows(a, lda, K, kread, 0, mr, (int16_t *)apanel)
#define QG_PANEL_TILE() be_qgemm_tile(k2, (const int16_t *)apanel, bpack + q * k2 * 32, mr, nr, y + j0, ldy, e, i0, j0)

#include "qgemm_loops.h"
