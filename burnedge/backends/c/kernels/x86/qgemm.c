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
#include "x86_qgemm.h"

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

/* NB = 2: 16 columns; NB = 1: at most 8 (narrow outputs, e.g. 8-channel stems: half the work) */
static inline __attribute__((always_inline)) void tile_avx2(const int rows, const int NB, long k2, const int16_t *a,
                                                            const int8_t *b, int nr, int8_t *y, long ldy,
                                                            const be_qepi *e, long i0, long j0) {
    /* named accumulators (an array of them gets spilled to the stack by gcc): 12 + 2 B + 1 broadcast registers */
    const __m256i z = _mm256_setzero_si256();
    __m256i c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z, c40 = z, c41 = z, c50 = z,
            c51 = z;
    const int32_t *ap = (const int32_t *)a;
#define QSTEP(R, A0, A1)                                                                                         \
    if (rows > R) {                                                                                              \
        const __m256i av = _mm256_set1_epi32(ap[R]);                                                             \
        A0 = _mm256_add_epi32(A0, _mm256_madd_epi16(av, b0));                                                    \
        if (NB > 1) A1 = _mm256_add_epi32(A1, _mm256_madd_epi16(av, b1));                                        \
    }
    for (long kp = 0; kp < k2; kp++, ap += BE_QMR) {
        const __m256i b0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + kp * 32)));
        const __m256i b1 = NB > 1 ? _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + kp * 32 + 16))) : z;
        QSTEP(0, c00, c01) QSTEP(1, c10, c11) QSTEP(2, c20, c21) QSTEP(3, c30, c31) QSTEP(4, c40, c41)
        QSTEP(5, c50, c51)
    }
#undef QSTEP
    const __m256i acc[BE_QMR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    be_qtile_store(acc, rows, NB, nr, y, ldy, e, i0, j0);
}

void be_qgemm_tile(long k2, const int16_t *a, const int8_t *b, int mr, int nr, int8_t *y, long ldy,
                   const be_qepi *e, long i0, long j0) {
    if (nr <= 8) {
        switch (mr) {
        case 6: tile_avx2(6, 1, k2, a, b, nr, y, ldy, e, i0, j0); return;
        case 5: tile_avx2(5, 1, k2, a, b, nr, y, ldy, e, i0, j0); return;
        case 4: tile_avx2(4, 1, k2, a, b, nr, y, ldy, e, i0, j0); return;
        case 3: tile_avx2(3, 1, k2, a, b, nr, y, ldy, e, i0, j0); return;
        case 2: tile_avx2(2, 1, k2, a, b, nr, y, ldy, e, i0, j0); return;
        default: tile_avx2(1, 1, k2, a, b, nr, y, ldy, e, i0, j0); return;
        }
    }
    switch (mr) {
    case 6: tile_avx2(6, 2, k2, a, b, nr, y, ldy, e, i0, j0); return;
    case 5: tile_avx2(5, 2, k2, a, b, nr, y, ldy, e, i0, j0); return;
    case 4: tile_avx2(4, 2, k2, a, b, nr, y, ldy, e, i0, j0); return;
    case 3: tile_avx2(3, 2, k2, a, b, nr, y, ldy, e, i0, j0); return;
    case 2: tile_avx2(2, 2, k2, a, b, nr, y, ldy, e, i0, j0); return;
    default: tile_avx2(1, 2, k2, a, b, nr, y, ldy, e, i0, j0); return;
    }
}

/* rows i0 .. i0+mr-1 of A (minus zp) as one A panel of int16 pairs, zero-padded past K (x86: junk may take the
 * place of the zeros when kread > K: the bytes a row may be read to; products with the B panels' zero padding stay
 * 0 and pairs past the panel are not stored) */
static void pack_a_rows(const int8_t *a, long lda, long K, long kread, int32_t zp, int mr, int16_t *dst) {
    const long k2 = (K + 1) / 2;
    long kp = 0;
    (void)kread;
    /* 16 k of the 6 rows at a time: each row's 8 int16 pairs (one int32 each) in a vector, a 4x4 int32 transpose
     * per 128-bit lane, then 8 stores of 8 int32 at 6-int32 steps in kp order: each overwrites the previous one's
     * 2 junk lanes; the last one's land on pair kp + 8, which the next block or the tail loop writes (the fast path
     * stops while one more pair follows, so no store leaves the panel) */
    const __m256i zp16 = _mm256_set1_epi16((int16_t)zp);
    for (; kp < k2; kp += 8) {
        /* the last (partial) block: copies of the rows' remaining k, padded with zp (so 0 after the subtraction),
         * transposed into `last`, of which only the pairs left are copied out */
        const int tail = kp + 8 >= k2, copy = 2 * kp + 16 > kread;
        int8_t rest[BE_QMR][16];
        int32_t last[8 * BE_QMR + 8];
        if (copy) {
            memset(rest, (int8_t)zp, sizeof rest);
            const long nk = K - 2 * kp, n8 = nk & ~7L;
            for (int i = 0; i < mr; i++) { /* 8-byte moves, then bytes: a libc call per row would cost more */
                const int8_t *src = a + i * lda + 2 * kp;
                for (long k = 0; k < n8; k += 8) memcpy(rest[i] + k, src + k, 8);
                for (long k = n8; k < nk; k++) rest[i][k] = src[k];
            }
        }
        __m256i r[8];
        for (int i = 0; i < 8; i++)
            r[i] = i < mr ? _mm256_sub_epi16(
                                _mm256_cvtepi8_epi16(_mm_loadu_si128(
                                    (const __m128i *)(copy ? rest[i] : a + i * lda + 2 * kp))), zp16)
                          : _mm256_setzero_si256();
        const __m256i t0 = _mm256_unpacklo_epi32(r[0], r[1]), t1 = _mm256_unpackhi_epi32(r[0], r[1]);
        const __m256i t2 = _mm256_unpacklo_epi32(r[2], r[3]), t3 = _mm256_unpackhi_epi32(r[2], r[3]);
        const __m256i t4 = _mm256_unpacklo_epi32(r[4], r[5]), t5 = _mm256_unpackhi_epi32(r[4], r[5]);
        const __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
        const __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
        const __m256i u4 = _mm256_unpacklo_epi64(t4, t4), u5 = _mm256_unpackhi_epi64(t4, t4);
        const __m256i u6 = _mm256_unpacklo_epi64(t5, t5), u7 = _mm256_unpackhi_epi64(t5, t5);
        /* u0 = kp {0 | 4} rows 0-3; u4 = kp {0 | 4} rows 4-5 (twice) ... */
        int32_t *d = tail ? last : (int32_t *)(dst + kp * BE_QMR * 2);
        const __m256i v[4][2] = {{u0, u4}, {u1, u5}, {u2, u6}, {u3, u7}};
        for (int j = 0; j < 4; j++) /* in kp order: each store overwrites the previous one's 2 junk lanes */
            _mm256_storeu_si256((__m256i *)(d + j * 6), _mm256_permute2x128_si256(v[j][0], v[j][1], 0x20));
        for (int j = 0; j < 4; j++)
            _mm256_storeu_si256((__m256i *)(d + (j + 4) * 6), _mm256_permute2x128_si256(v[j][0], v[j][1], 0x31));
        if (tail) {
            for (long i = 0; i < (k2 - kp) * 3; i++) memcpy(dst + kp * BE_QMR * 2 + 4 * i, last + 2 * i, 8);
            kp = k2;
        }
    }
    for (; kp < k2; kp++) {
        int16_t *d = dst + kp * BE_QMR * 2;
        for (int r = 0; r < BE_QMR; r++) {
            const long k = 2 * kp;
            d[2 * r] = (int16_t)(r < mr ? a[r * lda + k] - zp : 0);
            d[2 * r + 1] = (int16_t)(r < mr && k + 1 < K ? a[r * lda + k + 1] - zp : 0);
        }
    }
}

#ifdef BE_X86_VNNI
/* the first n < 16 bytes at s (mask = 2^n - 1), zeros after them; nothing past them is read */
static inline __attribute__((always_inline)) __m128i be_maskz_load16(unsigned mask, const int8_t *s) {
#ifdef BE_ISA_X86_VNNI512
    return _mm_maskz_loadu_epi8((__mmask16)mask, s);
#else
    int8_t t[16] = {0};
    for (int i = 0; i < 16 && (mask >> i & 1); i++) t[i] = s[i];
    return _mm_loadu_si128((const __m128i *)t);
#endif
}

/* 16 k of the 6 rows at a time: a 6 x 4 transpose of int32 quads (unpacks, then 4 + 2 lanes per quad row); row sums
 * from _mm_sad_epu8 on the sign-flipped bytes (sum(a + 128) - 128 * 16 per block). Rows past mr are not read
 * (the tile never reads their lanes); the last K % 16 bytes are a masked block (zeros past K: quads zero-padded,
 * and a zero's flipped 128 cancels in the sums), of which only its ceil((K % 16) / 4) quads are stored. */
void be_qvnni_pack_a(const int8_t *a, long lda, long K, int mr, int32_t *aq, int32_t *corr) {
    const long k16 = K / 16, nb = (K + 15) / 16, kq = (K + 3) / 4;
    const __m128i flip = _mm_set1_epi8((char)0x80), z = _mm_setzero_si128();
    const unsigned tail = (1u << (K % 16)) - 1u;
    __m128i sum[BE_QMR];
    for (int r = 0; r < BE_QMR; r++) sum[r] = z;
    for (long b = 0; b < nb; b++) {
        __m128i x[BE_QMR];
        for (int r = 0; r < BE_QMR; r++) {
            const int8_t *src = a + r * lda + 16 * b;
            x[r] = r >= mr ? z : b < k16 ? _mm_loadu_si128((const __m128i *)src) : be_maskz_load16(tail, src);
            sum[r] = _mm_add_epi64(sum[r], _mm_sad_epu8(_mm_xor_si128(x[r], flip), z));
        }
        const __m128i t0 = _mm_unpacklo_epi32(x[0], x[1]), t1 = _mm_unpackhi_epi32(x[0], x[1]);
        const __m128i t2 = _mm_unpacklo_epi32(x[2], x[3]), t3 = _mm_unpackhi_epi32(x[2], x[3]);
        const __m128i t4 = _mm_unpacklo_epi32(x[4], x[5]), t5 = _mm_unpackhi_epi32(x[4], x[5]);
        int32_t last[4 * BE_QMR];
        int32_t *d = b < k16 ? aq + 4 * b * BE_QMR : last;
        _mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi64(t0, t2));
        _mm_storel_epi64((__m128i *)(d + 4), t4);
        _mm_storeu_si128((__m128i *)(d + 6), _mm_unpackhi_epi64(t0, t2));
        _mm_storel_epi64((__m128i *)(d + 10), _mm_unpackhi_epi64(t4, t4));
        _mm_storeu_si128((__m128i *)(d + 12), _mm_unpacklo_epi64(t1, t3));
        _mm_storel_epi64((__m128i *)(d + 16), t5);
        _mm_storeu_si128((__m128i *)(d + 18), _mm_unpackhi_epi64(t1, t3));
        _mm_storel_epi64((__m128i *)(d + 22), _mm_unpackhi_epi64(t5, t5));
        if (b == k16) memcpy(aq + 4 * b * BE_QMR, last, (size_t)(kq - 4 * b) * BE_QMR * sizeof(int32_t));
    }
    for (int r = 0; r < mr; r++)
        corr[r] = (int32_t)(0u - 128u * ((uint32_t)(_mm_cvtsi128_si64(sum[r]) + _mm_extract_epi64(sum[r], 1)) -
                                         2048u * (uint32_t)nb));
}

/* be_qgemm_i8 / be_qgemm_panel on the VNNI tile: A (raw int8, a_zp == 0) packed as quads, its corrections
 * after them (in a thread's slice, k2 * 24 bytes: quads take kq * 24, and kq + 1 <= k2 once K >= 3); a pair of
 * column panels per tile where the build's tile takes 32 columns (`q` then skips the second). */
#define QG_A_QUADS (a_zp == 0 && K >= 3)
#define QG_PACK_QUADS()                                                                                          \
    if (quads)                                                                                                   \
        be_qvnni_pack_a(a + i0 * lda, lda, K, mr, (int32_t *)ap, (int32_t *)ap + (K + 3) / 4 * BE_QMR);          \
    else
#define QG_TILE_QUADS()                                                                                          \
    if (quads) {                                                                                                 \
        const int two = BE_QVNNI_COLS > 16 && q + 1 < q1;                                                        \
        be_qvnni_tile_pairs(k2, (const int32_t *)ap, (const int32_t *)ap + (K + 3) / 4 * BE_QMR,                 \
                            bpack + q * k2 * 32, mr, two ? (int)(N - j0 < 32 ? N - j0 : 32) : nr,                \
                            y + i0 * ldy + j0, ldy, e, i0, j0);                                                  \
        q += two;                                                                                                \
        continue;                                                                                                \
    }
#define QG_PANEL_PACK()                                                                                          \
    ((void)kread, be_qvnni_pack_a(a, lda, K, mr, (int32_t *)apanel, (int32_t *)apanel + (K + 3) / 4 * BE_QMR))
#define QG_PANEL_TILE() q += panel_tile_vnni(k2, K, apanel, bpack, q, np, N, mr, y, ldy, e, i0)

/* one tile of be_qgemm_panel from column panel q (two when the tile takes them): how many panels past q it used */
static inline long panel_tile_vnni(long k2, long K, const void *apanel, const int8_t *bpack, long q, long np, long N,
                                   int mr, int8_t *y, long ldy, const be_qepi *e, long i0) {
    const long j0 = q * BE_QNR, two = BE_QVNNI_COLS > 16 && q + 1 < np, left = N - j0;
    const int nr = (int)(left < BE_QNR * (1 + two) ? left : BE_QNR * (1 + two));
    const int32_t *aq = (const int32_t *)apanel;
    be_qvnni_tile_pairs(k2, aq, aq + (K + 3) / 4 * BE_QMR, bpack + q * k2 * 32, mr, nr, y + j0, ldy, e, i0, j0);
    return two;
}
#else
/* no quad path: int16-pair panels and be_qgemm_tile everywhere (qgemm_loops.h) */
#define QG_A_QUADS 0
#define QG_PACK_QUADS()
#define QG_TILE_QUADS()
#define QG_PANEL_PACK() pack_a_rows(a, lda, K, kread, 0, mr, (int16_t *)apanel)
#define QG_PANEL_TILE() be_qgemm_tile(k2, (const int16_t *)apanel, bpack + q * k2 * 32, mr, nr, y + j0, ldy, e, i0, j0)
#endif

#include "qgemm_loops.h"
