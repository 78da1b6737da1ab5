/* The int8 tiles on AVX-512 VNNI (vpdpbusd on zmm: 64 exact multiply-adds per instruction); x86_qgemm.h has the
 * arithmetic (weights flipped to unsigned, the row-sum correction) and the A panel layout. Built only where the
 * compiler has AVX-512 F/BW/VL and VNNI (isa.h BE_ISA_X86_VNNI512); else this file is empty.
 *
 * Tile (pairs, be_qgemm_i8 / be_qgemm_panel): 6 rows x 32 columns in 12 zmm accumulators. Per K quad and column
 * panel: one 64-byte load (pair rows 2kq, 2kq+1 of 16 columns), a vpermw that makes them 16 quads, a sign-bit
 * flip, then per row one broadcast A quad and one vpdpbusd. An odd last pair row is loaded alone (masked: nothing
 * past the panel is read). Tile (quads, NCHW convs): 6 rows x 16 columns, B quads loaded as they are.
 * Epilogue: + corr[r], then the shared AVX2 requantisation (`be_qtile_store`) on 8-lane halves.
 */
#include "x86_qgemm.h"

#ifdef BE_ISA_X86_VNNI512

/* word w of the result = word (w & 1) * 16 + w / 2 of the pair rows: quad c = (pair c of row 2kq, pair c of 2kq+1) */
static const int16_t PAIR_TO_QUAD[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
                                         8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};

static inline __attribute__((always_inline)) void store_rows(const int rows, __m512i c[BE_QMR], const int32_t *corr,
                                                             int nr, int8_t *y, long ldy, const be_qepi *e, long i0,
                                                             long j0) {
    __m256i acc[BE_QMR][2];
    for (int r = 0; r < BE_QMR; r++) {
        const __m512i v = _mm512_add_epi32(c[r], _mm512_set1_epi32(r < rows ? corr[r] : 0));
        acc[r][0] = _mm512_castsi512_si256(v);
        acc[r][1] = _mm512_extracti64x4_epi64(v, 1);
    }
    if (nr <= 8)
        be_qtile_store(acc, rows, 1, nr, y, ldy, e, i0, j0);
    else
        be_qtile_store(acc, rows, 2, nr, y, ldy, e, i0, j0);
}

/* QUADS: B is kq quad rows of unsigned bytes (64 per row); else k2 pair rows (32 per row) of NB panels */
static inline __attribute__((always_inline)) void tile(const int rows, const int NB, const int QUADS, long kb,
                                                       const int32_t *aq, const int32_t *corr, const int8_t *b,
                                                       int nr, int8_t *y, long ldy, const be_qepi *e, long i0,
                                                       long j0) {
    const __m512i z = _mm512_setzero_si512(), flip = _mm512_set1_epi8((char)0x80);
    const __m512i perm = _mm512_loadu_si512((const void *)PAIR_TO_QUAD);
    __m512i c0 = z, c1 = z, c2 = z, c3 = z, c4 = z, c5 = z, d0 = z, d1 = z, d2 = z, d3 = z, d4 = z, d5 = z;
    const long kq = QUADS ? kb : (kb + 1) / 2, whole = QUADS ? kb : kb / 2;
    const int8_t *b1 = b + kb * 32;
#define VSTEP(R, C, D)                                                                                           \
    if (rows > R) {                                                                                              \
        const __m512i av = _mm512_set1_epi32(ap[R]);                                                             \
        C = _mm512_dpbusd_epi32(C, v0, av);                                                                      \
        if (NB > 1) D = _mm512_dpbusd_epi32(D, v1, av);                                                          \
    }
#define VSTEPS()                                                                                                 \
    VSTEP(0, c0, d0) VSTEP(1, c1, d1) VSTEP(2, c2, d2) VSTEP(3, c3, d3) VSTEP(4, c4, d4) VSTEP(5, c5, d5)
    for (long q = 0; q < kq; q++) {
        const int32_t *ap = aq + q * BE_QMR;
        __m512i v0, v1 = z;
        if (QUADS) {
            v0 = _mm512_loadu_si512((const void *)(b + q * 64));
        } else if (q < whole) {
            v0 = _mm512_xor_si512(_mm512_permutexvar_epi16(perm, _mm512_loadu_si512((const void *)(b + q * 64))), flip);
            if (NB > 1)
                v1 = _mm512_xor_si512(_mm512_permutexvar_epi16(perm, _mm512_loadu_si512((const void *)(b1 + q * 64))),
                                      flip);
        } else { /* the odd last pair row alone */
            const __mmask64 half = 0xFFFFFFFFull;
            v0 = _mm512_xor_si512(_mm512_permutexvar_epi16(perm, _mm512_maskz_loadu_epi8(half, b + q * 64)), flip);
            if (NB > 1)
                v1 = _mm512_xor_si512(_mm512_permutexvar_epi16(perm, _mm512_maskz_loadu_epi8(half, b1 + q * 64)), flip);
        }
        VSTEPS()
    }
#undef VSTEPS
#undef VSTEP
    __m512i c[BE_QMR] = {c0, c1, c2, c3, c4, c5};
    store_rows(rows, c, corr, nr < BE_QNR ? nr : BE_QNR, y, ldy, e, i0, j0);
    if (NB > 1 && nr > BE_QNR) {
        __m512i d[BE_QMR] = {d0, d1, d2, d3, d4, d5};
        store_rows(rows, d, corr, nr - BE_QNR, y + BE_QNR, ldy, e, i0, j0 + BE_QNR);
    }
}

#define BE_QVNNI_ROWS(NB, QUADS)                                                                                 \
    switch (mr) {                                                                                                \
    case 6: tile(6, NB, QUADS, kb, aq, corr, b, nr, y, ldy, e, i0, j0); return;                                  \
    case 5: tile(5, NB, QUADS, kb, aq, corr, b, nr, y, ldy, e, i0, j0); return;                                  \
    case 4: tile(4, NB, QUADS, kb, aq, corr, b, nr, y, ldy, e, i0, j0); return;                                  \
    case 3: tile(3, NB, QUADS, kb, aq, corr, b, nr, y, ldy, e, i0, j0); return;                                  \
    case 2: tile(2, NB, QUADS, kb, aq, corr, b, nr, y, ldy, e, i0, j0); return;                                  \
    default: tile(1, NB, QUADS, kb, aq, corr, b, nr, y, ldy, e, i0, j0); return;                                 \
    }

void be_qvnni_tile_pairs(long k2, const int32_t *aq, const int32_t *corr, const int8_t *bp, int mr, int nr, int8_t *y,
                         long ldy, const be_qepi *e, long i0, long j0) {
    const long kb = k2;
    const int8_t *b = bp;
    if (nr > BE_QNR) BE_QVNNI_ROWS(2, 0)
    BE_QVNNI_ROWS(1, 0)
}

void be_qvnni_tile_quads(long kq, const int32_t *aq, const int32_t *corr, const uint8_t *bq, int mr, int nr,
                         int8_t *y, long ldy, const be_qepi *e, long i0, long j0) {
    const long kb = kq;
    const int8_t *b = (const int8_t *)bq;
    BE_QVNNI_ROWS(1, 1)
}

#endif
