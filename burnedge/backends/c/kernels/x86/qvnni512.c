/* The int8 tiles on AVX-512 VNNI (vpdpbusd on zmm: 64 exact multiply-adds per instruction); x86_qgemm.h has the
 * arithmetic (weights flipped to unsigned, the row-sum correction) and the A panel layout. Built only where the
 * compiler has AVX-512 F/BW/VL and VNNI (isa.h BE_ISA_X86_VNNI512); else this file is empty.
 *
 * Tile (pairs, be_qgemm_i8 / be_qgemm_panel): 6 rows x 32 columns in 12 zmm accumulators. Per K quad and column
 * panel: one 64-byte load (pair rows 2kq, 2kq+1 of 16 columns), a vpermw that makes them 16 quads, a sign-bit
 * flip, then per row one broadcast A quad and one vpdpbusd. An odd last pair row is loaded alone (masked: nothing
 * past the panel is read). Tile (quads, NCHW convs): 6 rows x 16 columns, B quads loaded as they are.
 * Epilogue: the accumulators start at corr[r] + bias; the requantisation rule on 16 lanes (be_rq16), narrowed with
 * saturation, masked stores for column tails.
 */
#include "x86_qgemm.h"

#ifdef BE_ISA_X86_VNNI512

/* word w of the result = word (w & 1) * 16 + w / 2 of the pair rows: quad c = (pair c of row 2kq, pair c of 2kq+1) */
static const int16_t PAIR_TO_QUAD[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
                                         8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};

/* a per-row channel's requantisation of 16 lanes (one channel broadcast): be_rq16's short form when s >= 33 */
static inline __attribute__((always_inline)) __m512i rq_row(__m512i acc, int32_t m, int32_t s, int32_t lim) {
    if (s >= 33) {
        const __m512i mv = _mm512_set1_epi32(m);
        const __m512i pe = _mm512_mul_epi32(acc, mv), po = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), mv);
        const __m512i h = _mm512_mask_shuffle_epi32(po, 0x5555, pe, (_MM_PERM_ENUM)0xF5); /* even lanes: hi(pe) */
        return _mm512_sra_epi32(_mm512_add_epi32(h, _mm512_set1_epi32(1 << (s - 33))), _mm_cvtsi32_si128(s - 32));
    }
    const be_rqv16 q = be_rqv16_make(_mm512_set1_epi32(m), _mm512_set1_epi32(s), _mm512_set1_epi32(lim));
    return be_rq16(acc, &q);
}

/* row i < n of four narrowed rows (lane i of b) stored: all 16 bytes, or the first nr (masked) */
static inline __attribute__((always_inline)) void store4(__m512i b, int n, int nr, int8_t *y, long ldy) {
    const __mmask16 keep = (__mmask16)((1u << nr) - 1u);
    const __m128i o[4] = {_mm512_castsi512_si128(b), _mm512_extracti32x4_epi32(b, 1), _mm512_extracti32x4_epi32(b, 2),
                          _mm512_extracti32x4_epi32(b, 3)};
    for (int i = 0; i < n; i++) {
        if (nr == BE_QNR)
            _mm_storeu_si128((__m128i *)(y + i * ldy), o[i]);
        else
            _mm_mask_storeu_epi8(y + i * ldy, keep, o[i]);
    }
}

/* the start of each accumulator row: bias (per column: of the 16 or 32 columns; per row: the row's) + corr[r] */
static inline __attribute__((always_inline)) void start_values(const int rows, const int NB, const int32_t *corr,
                                                               const be_qepi *e, long i0, long j0,
                                                               __m512i v0[BE_QMR], __m512i v1[BE_QMR]) {
    const __m512i z = _mm512_setzero_si512();
    __m512i b0 = z, b1 = z;
    if (e->per_col && e->bias) { /* per-column arrays are padded to 16 */
        b0 = _mm512_loadu_si512((const void *)(e->bias + j0));
        if (NB > 1) b1 = _mm512_loadu_si512((const void *)(e->bias + j0 + BE_QNR));
    }
    for (int r = 0; r < BE_QMR; r++) {
        if (r >= rows) {
            v0[r] = v1[r] = z;
        } else if (e->per_col) {
            const __m512i cr = _mm512_set1_epi32(corr[r]);
            v0[r] = _mm512_add_epi32(b0, cr);
            v1[r] = _mm512_add_epi32(b1, cr);
        } else {
            const int32_t bias = e->bias ? e->bias[i0 + r] : 0;
            v0[r] = v1[r] = _mm512_set1_epi32((int32_t)((uint32_t)bias + (uint32_t)corr[r]));
        }
    }
}

/* 16 columns of `rows` accumulator rows (bias and corr already in them), requantised (be_rq16), then narrowed four
 * rows at a time (be_rq_narrow64: saturated to int16, + zp with int16 saturation, to int8, clamped to [lo, hi]:
 * be_rq_pack16's steps in order), masked stores for column tails */
static inline __attribute__((always_inline)) void store_rows(const int rows, const __m512i c[BE_QMR], int nr,
                                                             int8_t *y, long ldy, const be_qepi *e, long i0,
                                                             long j0) {
    const __m512i zp16 = _mm512_set1_epi16((int16_t)e->zp);
    const __m512i lo = _mm512_set1_epi8((int8_t)e->lo), hi = _mm512_set1_epi8((int8_t)e->hi);
    __m512i t[BE_QMR];
    if (e->per_col) {
        const be_rqv16 col = be_rqv16_make(_mm512_loadu_si512((const void *)(e->mult + j0)),
                                           _mm512_loadu_si512((const void *)(e->shift + j0)),
                                           _mm512_loadu_si512((const void *)(e->lim + j0)));
        for (int r = 0; r < rows; r++) t[r] = be_rq16(c[r], &col);
    } else {
        for (int r = 0; r < rows; r++) {
            const long ch = i0 + r;
            t[r] = rq_row(c[r], e->mult[ch], e->shift[ch], e->lim[ch]);
        }
    }
    for (int r = rows; r < BE_QMR; r++) t[r] = t[0];
    store4(be_rq_narrow64(t[0], t[1], t[2], t[3], zp16, lo, hi), rows < 4 ? rows : 4, nr, y, ldy);
    if (rows > 4) store4(be_rq_narrow64(t[4], t[5], t[4], t[5], zp16, lo, hi), rows - 4, nr, y + 4 * ldy, ldy);
}

/* QUADS: B is kq quad rows of unsigned bytes (64 per row); else k2 pair rows (32 per row) of NB panels */
static inline __attribute__((always_inline)) void tile(const int rows, const int NB, const int QUADS, long kb,
                                                       const int32_t *aq, const int32_t *corr, const int8_t *b,
                                                       int nr, int8_t *y, long ldy, const be_qepi *e, long i0,
                                                       long j0) {
    const __m512i z = _mm512_setzero_si512(), flip = _mm512_set1_epi8((char)0x80);
    const __m512i perm = _mm512_loadu_si512((const void *)PAIR_TO_QUAD);
    /* the accumulators start at bias + corr[r] (wrapping int32 sums in any order: the same bits), so the epilogue
     * adds nothing */
    __m512i i0v[BE_QMR], i1v[BE_QMR];
    start_values(rows, NB, corr, e, i0, j0, i0v, i1v);
    __m512i c0 = i0v[0], c1 = i0v[1], c2 = i0v[2], c3 = i0v[3], c4 = i0v[4], c5 = i0v[5];
    __m512i d0 = i1v[0], d1 = i1v[1], d2 = i1v[2], d3 = i1v[3], d4 = i1v[4], d5 = i1v[5];
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
    store_rows(rows, c, nr < BE_QNR ? nr : BE_QNR, y, ldy, e, i0, j0);
    if (NB > 1 && nr > BE_QNR) {
        __m512i d[BE_QMR] = {d0, d1, d2, d3, d4, d5};
        store_rows(rows, d, nr - BE_QNR, y + BE_QNR, ldy, e, i0, j0 + BE_QNR);
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
