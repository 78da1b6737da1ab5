/* int8 GEMM: a 6x16 micro-kernel on int16 pairs (_mm256_madd_epi16: exact, no saturation) with the
 * requantising epilogue in registers, a portable C twin, and QMatMul's loop around it.
 *
 * Algorithm (tile):
 *  1. 12 ymm int32 accumulators (6 rows x 16 columns); per K pair: two B loads of 16 int8 sign-extended to
 *     int16, one 32-bit broadcast of each row's int16 pair, one madd + add per accumulator. Every product of
 *     int16 values in [-255, 255] x [-128, 127] is exact and pairs sum in int32; accumulators wrap modulo 2^32,
 *     so they equal the exact sum whenever it fits int32 (which the spec requires).
 *  2. Epilogue: + bias (per row or per column), requantise 8 lanes at a time (qgemm.h `be_rq8`), pack to int8
 *     with saturation, clamp to [lo, hi], store the tile's nr columns.
 * QMatMul: jobs are (6-row panel, range of column panels); a job packs its rows of A (minus a_zp) as int16 pairs
 * into its thread's scratch slice, then runs the tiles. Integer sums do not depend on the thread count.
 */
#define BE_Q_INTERNAL 1
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

#ifdef BE_Q_AVX2
static inline __attribute__((always_inline)) void tile_avx2(const int rows, long k2, const int16_t *a, const int8_t *b,
                                                            int nr, int8_t *y, long ldy, const be_qepi *e, long i0,
                                                            long j0) {
    __m256i acc[BE_QMR][2];
    for (int r = 0; r < rows; r++) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    const int32_t *ap = (const int32_t *)a;
    for (long kp = 0; kp < k2; kp++) {
        const __m256i b0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + kp * 32)));
        const __m256i b1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + kp * 32 + 16)));
        for (int r = 0; r < rows; r++) {
            const __m256i av = _mm256_set1_epi32(ap[kp * BE_QMR + r]);
            acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(av, b0));
            acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(av, b1));
        }
    }
    const __m256i zp16 = _mm256_set1_epi16((int16_t)e->zp);
    const __m128i lo = _mm_set1_epi8((int8_t)e->lo), hi = _mm_set1_epi8((int8_t)e->hi);
    be_rqv col0, col1;
    __m256i cb0 = _mm256_setzero_si256(), cb1 = cb0;
    if (e->per_col) {
        const __m256i *mp = (const __m256i *)(e->mult + j0), *sp = (const __m256i *)(e->shift + j0);
        const __m256i *lp = (const __m256i *)(e->lim + j0);
        col0 = be_rqv_make(_mm256_loadu_si256(mp), _mm256_loadu_si256(sp), _mm256_loadu_si256(lp));
        col1 = be_rqv_make(_mm256_loadu_si256(mp + 1), _mm256_loadu_si256(sp + 1), _mm256_loadu_si256(lp + 1));
        if (e->bias) {
            cb0 = _mm256_loadu_si256((const __m256i *)(e->bias + j0));
            cb1 = _mm256_loadu_si256((const __m256i *)(e->bias + j0 + 8));
        }
    }
    for (int r = 0; r < rows; r++) {
        __m128i out;
        if (e->per_col) {
            out = be_rq_pack16(be_rq8(_mm256_add_epi32(acc[r][0], cb0), &col0),
                               be_rq8(_mm256_add_epi32(acc[r][1], cb1), &col1), zp16, lo, hi);
        } else {
            const long ch = i0 + r;
            const be_rqv q = be_rqv_bcast(e->mult[ch], e->shift[ch], e->lim[ch]);
            const __m256i bb = _mm256_set1_epi32(e->bias ? e->bias[ch] : 0);
            out = be_rq_pack16(be_rq8(_mm256_add_epi32(acc[r][0], bb), &q),
                               be_rq8(_mm256_add_epi32(acc[r][1], bb), &q), zp16, lo, hi);
        }
        if (nr == BE_QNR) {
            _mm_storeu_si128((__m128i *)(y + r * ldy), out);
        } else {
            int8_t t[16];
            _mm_storeu_si128((__m128i *)t, out);
            memcpy(y + r * ldy, t, (size_t)nr);
        }
    }
}
#endif

void be_qgemm_tile(long k2, const int16_t *a, const int8_t *b, int mr, int nr, int8_t *y, long ldy,
                   const be_qepi *e, long i0, long j0) {
#ifdef BE_Q_AVX2
    switch (mr) {
    case 6: tile_avx2(6, k2, a, b, nr, y, ldy, e, i0, j0); return;
    case 5: tile_avx2(5, k2, a, b, nr, y, ldy, e, i0, j0); return;
    case 4: tile_avx2(4, k2, a, b, nr, y, ldy, e, i0, j0); return;
    case 3: tile_avx2(3, k2, a, b, nr, y, ldy, e, i0, j0); return;
    case 2: tile_avx2(2, k2, a, b, nr, y, ldy, e, i0, j0); return;
    default: tile_avx2(1, k2, a, b, nr, y, ldy, e, i0, j0); return;
    }
#else
    tile_portable(k2, a, b, mr, nr, y, ldy, e, i0, j0);
#endif
}

/* rows i0 .. i0+mr-1 of A (minus zp) as one A panel of int16 pairs, zero-padded */
static void pack_a_rows(const int8_t *a, long lda, long K, int32_t zp, int mr, int16_t *dst) {
    const long k2 = (K + 1) / 2;
    for (long kp = 0; kp < k2; kp++) {
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
            if (packed != p) {
                pack_a_rows(a + i0 * lda, lda, K, a_zp, mr, ap);
                packed = p;
            }
            const long q0 = np * ch / nchunks, q1 = np * (ch + 1) / nchunks;
            for (long q = q0; q < q1; q++) {
                const long j0 = q * BE_QNR;
                const int nr = (int)(N - j0 < BE_QNR ? N - j0 : BE_QNR);
                be_qgemm_tile(k2, ap, bpack + q * k2 * 32, mr, nr, y + i0 * ldy + j0, ldy, e, i0, j0);
            }
        }
    }
}
