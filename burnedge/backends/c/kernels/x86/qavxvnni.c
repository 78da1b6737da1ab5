/* The int8 tiles on AVX-VNNI (the VEX vpdpbusd on ymm: 32 exact multiply-adds per instruction), for CPUs with it
 * but without AVX-512 VNNI (isa.h BE_ISA_X86_AVXVNNI; else this file is empty); x86_qgemm.h has the arithmetic
 * (weights flipped to unsigned, the row-sum correction) and the A panel layout.
 *
 * Tile: 6 rows x 16 columns in 12 ymm accumulators. Pairs (be_qgemm_i8 / be_qgemm_panel): per K quad, pair rows
 * 2kq and 2kq+1 (32 bytes each; an odd last one alone) flipped and interleaved by 16-bit unpacks, which gives the
 * quads of columns {0-3, 8-11} and {4-7, 12-15}; the epilogue puts the 128-bit halves back in column order.
 * Quads (NCHW convs): columns 0-7 and 8-15 loaded as they are. Then the shared AVX2 requantisation.
 */
#include "x86_qgemm.h"

#ifdef BE_ISA_X86_AVXVNNI

static inline __attribute__((always_inline)) void tile(const int rows, const int QUADS, long kb, const int32_t *aq,
                                                       const int32_t *corr, const int8_t *b, int nr, int8_t *y,
                                                       long ldy, const be_qepi *e, long i0, long j0) {
    const __m256i z = _mm256_setzero_si256(), flip = _mm256_set1_epi8((char)0x80);
    __m256i c0 = z, c1 = z, c2 = z, c3 = z, c4 = z, c5 = z, d0 = z, d1 = z, d2 = z, d3 = z, d4 = z, d5 = z;
    const long kq = QUADS ? kb : (kb + 1) / 2, whole = QUADS ? kb : kb / 2;
#define VSTEP(R, C, D)                                                                                           \
    if (rows > R) {                                                                                              \
        const __m256i av = _mm256_set1_epi32(ap[R]);                                                             \
        C = _mm256_dpbusd_avx_epi32(C, v0, av);                                                                  \
        D = _mm256_dpbusd_avx_epi32(D, v1, av);                                                                  \
    }
    for (long q = 0; q < kq; q++) {
        const int32_t *ap = aq + q * BE_QMR;
        __m256i v0, v1;
        if (QUADS) {
            v0 = _mm256_loadu_si256((const __m256i *)(b + q * 64));
            v1 = _mm256_loadu_si256((const __m256i *)(b + q * 64 + 32));
        } else {
            const __m256i p0 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(b + q * 64)), flip);
            /* the odd last pair row alone: 0 + 128 in its place meets A's zero padding */
            const __m256i p1 =
                q < whole ? _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(b + q * 64 + 32)), flip) : flip;
            v0 = _mm256_unpacklo_epi16(p0, p1);
            v1 = _mm256_unpackhi_epi16(p0, p1);
        }
        VSTEP(0, c0, d0) VSTEP(1, c1, d1) VSTEP(2, c2, d2) VSTEP(3, c3, d3) VSTEP(4, c4, d4) VSTEP(5, c5, d5)
    }
#undef VSTEP
    const __m256i c[BE_QMR] = {c0, c1, c2, c3, c4, c5}, d[BE_QMR] = {d0, d1, d2, d3, d4, d5};
    __m256i acc[BE_QMR][2];
    for (int r = 0; r < BE_QMR; r++) {
        const __m256i k = _mm256_set1_epi32(r < rows ? corr[r] : 0);
        if (QUADS) {
            acc[r][0] = _mm256_add_epi32(c[r], k);
            acc[r][1] = _mm256_add_epi32(d[r], k);
        } else { /* c: columns 0-3 | 8-11, d: 4-7 | 12-15 */
            acc[r][0] = _mm256_add_epi32(_mm256_permute2x128_si256(c[r], d[r], 0x20), k);
            acc[r][1] = _mm256_add_epi32(_mm256_permute2x128_si256(c[r], d[r], 0x31), k);
        }
    }
    if (nr <= 8)
        be_qtile_store(acc, rows, 1, nr, y, ldy, e, i0, j0);
    else
        be_qtile_store(acc, rows, 2, nr, y, ldy, e, i0, j0);
}

#define BE_QVNNI_ROWS(QUADS)                                                                                     \
    switch (mr) {                                                                                                \
    case 6: tile(6, QUADS, kb, aq, corr, b, nr, y, ldy, e, i0, j0); return;                                      \
    case 5: tile(5, QUADS, kb, aq, corr, b, nr, y, ldy, e, i0, j0); return;                                      \
    case 4: tile(4, QUADS, kb, aq, corr, b, nr, y, ldy, e, i0, j0); return;                                      \
    case 3: tile(3, QUADS, kb, aq, corr, b, nr, y, ldy, e, i0, j0); return;                                      \
    case 2: tile(2, QUADS, kb, aq, corr, b, nr, y, ldy, e, i0, j0); return;                                      \
    default: tile(1, QUADS, kb, aq, corr, b, nr, y, ldy, e, i0, j0); return;                                     \
    }

void be_qvnni_tile_pairs(long k2, const int32_t *aq, const int32_t *corr, const int8_t *b, int mr, int nr, int8_t *y,
                         long ldy, const be_qepi *e, long i0, long j0) {
    const long kb = k2;
    BE_QVNNI_ROWS(0)
}

void be_qvnni_tile_quads(long kq, const int32_t *aq, const int32_t *corr, const uint8_t *bq, int mr, int nr,
                         int8_t *y, long ldy, const be_qepi *e, long i0, long j0) {
    const long kb = kq;
    const int8_t *b = (const int8_t *)bq;
    BE_QVNNI_ROWS(1)
}

#endif
