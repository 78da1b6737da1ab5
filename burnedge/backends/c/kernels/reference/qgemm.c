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

void be_qgemm_i8(long M, long N, long K, const int8_t *a, long lda, int32_t a_zp, const int8_t *bpack, int8_t *y,
                 long ldy, const be_qepi *e, int16_t *scratch, int threads) {
    const long k2 = (K + 1) / 2, mp = (M + BE_QMR - 1) / BE_QMR, np = (N + BE_QNR - 1) / BE_QNR;
    int nt = threads < BE_Q_MAX_THREADS ? threads : BE_Q_MAX_THREADS;
    if ((double)M * N * K < 100000.0) nt = 1;
    /* split columns when there are too few row panels to feed the threads */
    long nchunks = 1;
    if (nt > 1 && mp < 2 * nt) nchunks = np < 2 * nt ? np : 2 * nt;
    const long jobs = mp * nchunks;
    if (nt > jobs) nt = (int)jobs;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int t = 0; t < nt; t++) {
        int16_t *ap = scratch + (long)t * k2 * BE_QMR * 2;
        long packed = -1;
        for (long job = t; job < jobs; job += nt) {
            const long p = job / nchunks, ch = job % nchunks;
            const long i0 = p * BE_QMR;
            const int mr = (int)(M - i0 < BE_QMR ? M - i0 : BE_QMR);
            const int quads = 0;
            if (packed != p) {
                    pack_a_rows(a + i0 * lda, lda, K, K, a_zp, mr, ap);
                packed = p;
            }
            const long q0 = np * ch / nchunks, q1 = np * (ch + 1) / nchunks;
            for (long q = q0; q < q1; q++) {
                const long j0 = q * BE_QNR;
                const int nr = (int)(N - j0 < BE_QNR ? N - j0 : BE_QNR);
                (void)quads;
                be_qgemm_tile(k2, ap, bpack + q * k2 * 32, mr, nr, y + i0 * ldy + j0, ldy, e, i0, j0);
            }
        }
    }
}

void be_qgemm_panel(const int8_t *a, long lda, long K, long kread, int mr, long N, const int8_t *bpack, int8_t *y,
                    long ldy, const be_qepi *e, long i0, void *apanel) {
    const long k2 = (K + 1) / 2, np = (N + BE_QNR - 1) / BE_QNR;
    pack_a_rows(a, lda, K, kread, 0, mr, (int16_t *)apanel);
    for (long q = 0; q < np; q++) {
        const long j0 = q * BE_QNR;
        const int nr = (int)(N - j0 < BE_QNR ? N - j0 : BE_QNR);
        be_qgemm_tile(k2, (const int16_t *)apanel, bpack + q * k2 * 32, mr, nr, y + j0, ldy, e, i0, j0);
    }
}
