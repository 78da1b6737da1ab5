/* Internal to the x86 kernel set: the AVX2 requantisation of the int8 kernels (exactly qgemm.h's rule on 8
 * lanes), shared by qgemm.c, qconv*.c and qelementwise.c. */
#ifndef BURNEDGE_X86_QGEMM_H
#define BURNEDGE_X86_QGEMM_H

#include "qgemm.h"
#include "x86_simd.h"

/* requantisation constants of 8 lanes (one channel per lane, or one channel broadcast) */
typedef struct {
    __m256i m, mo, se, so, re, ro, c, lim, nlim;
    __m256i hrnd, hsh; /* the short form: 2^(s-33), s-32 */
    int hi;            /* every lane has s >= 33 (or m == 0) */
} be_rqv;

static inline __attribute__((always_inline)) be_rqv be_rqv_make(__m256i m, __m256i s, __m256i lim) {
    const __m256i one = _mm256_set1_epi64x(1), off = _mm256_set1_epi64x((int64_t)1 << 62);
    be_rqv r;
    r.m = m;
    r.mo = _mm256_srli_epi64(m, 32);
    r.hi = _mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpgt_epi32(s, _mm256_set1_epi32(32)),
                                                _mm256_cmpeq_epi32(m, _mm256_setzero_si256()))) == -1;
    r.hsh = _mm256_sub_epi32(s, _mm256_set1_epi32(32));
    r.hrnd = _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_sub_epi32(r.hsh, _mm256_set1_epi32(1)));
    r.se = _mm256_blend_epi32(s, _mm256_setzero_si256(), 0xAA);
    r.so = _mm256_srli_epi64(s, 32);
    r.re = _mm256_add_epi64(_mm256_sllv_epi64(one, _mm256_sub_epi64(r.se, one)), off);
    r.ro = _mm256_add_epi64(_mm256_sllv_epi64(one, _mm256_sub_epi64(r.so, one)), off);
    r.c = _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_sub_epi32(_mm256_set1_epi32(62), s)); /* 2^(62-s) mod 2^32 */
    r.lim = lim;
    r.nlim = _mm256_sub_epi32(_mm256_setzero_si256(), lim);
    return r;
}

static inline __attribute__((always_inline)) be_rqv be_rqv_bcast(int32_t m, int32_t s, int32_t lim) {
    return be_rqv_make(_mm256_set1_epi32(m), _mm256_set1_epi32(s), _mm256_set1_epi32(lim));
}

/* t = floor((clamp(acc) * m + 2^(s-1)) / 2^s) on 8 lanes: 64-bit products biased by 2^62 so that a logical
 * shift floors them; the bias (2^(62-s) after the shift) is removed in 32 bits, exact since |t| < 2^31.
 * Where every lane has s >= 33 or m == 0 (the usual case: scale ratios below 2^-2), the short form of rq32.h: lim
 * is INT32_MAX there (no clamp) and t = (hi(acc * m) + 2^(s-33)) >> (s-32) exactly; hi of the 8 products is two
 * vpmuldq, a vpshufd and a blend, then one add and one vpsravd: 7 operations instead of 12 (lanes of m == 0 give 0
 * either way: the shift counts past 31 leave 0). */
static inline __attribute__((always_inline)) __m256i be_rq8(__m256i acc, const be_rqv *r) {
    if (r->hi) {
        const __m256i pe = _mm256_mul_epi32(acc, r->m), po = _mm256_mul_epi32(_mm256_srli_epi64(acc, 32), r->mo);
        const __m256i h = _mm256_blend_epi32(_mm256_shuffle_epi32(pe, 0xF5), po, 0xAA); /* hi words in place */
        return _mm256_srav_epi32(_mm256_add_epi32(h, r->hrnd), r->hsh);
    }
    acc = _mm256_min_epi32(_mm256_max_epi32(acc, r->nlim), r->lim);
    __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(acc, r->m), r->re);
    __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(acc, 32), r->mo), r->ro);
    pe = _mm256_srlv_epi64(pe, r->se);
    po = _mm256_srlv_epi64(po, r->so);
    return _mm256_sub_epi32(_mm256_blend_epi32(pe, _mm256_slli_epi64(po, 32), 0xAA), r->c);
}

/* 16 int8 outputs from two vectors of t: saturating packs, + zp (saturating int16), then [lo, hi] */
static inline __attribute__((always_inline)) __m128i be_rq_pack16(__m256i t0, __m256i t1, __m256i zp16, __m128i lo,
                                                                  __m128i hi) {
    __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(t0, t1), 0xD8);
    p = _mm256_adds_epi16(p, zp16);
    __m128i b = _mm_packs_epi16(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
    return _mm_min_epi8(_mm_max_epi8(b, lo), hi);
}

/* The epilogue of an int32 tile (the AVX2 and VNNI tiles share it): rows x (8 * NB) accumulators acc[r][half]
 * (columns 0-7, 8-15) + bias (per row or per column), requantised 8 lanes at a time (`be_rq8`), packed to int8
 * with saturation, clamped to [lo, hi]; the first nr columns of each row stored at y + r*ldy. */
static inline __attribute__((always_inline)) void be_qtile_store(const __m256i acc[BE_QMR][2], const int rows,
                                                                const int NB, int nr, int8_t *y, long ldy,
                                                                const be_qepi *e, long i0, long j0) {
    const __m256i zp16 = _mm256_set1_epi16((int16_t)e->zp);
    const __m128i lo = _mm_set1_epi8((int8_t)e->lo), hi = _mm_set1_epi8((int8_t)e->hi);
    be_rqv col0, col1;
    __m256i cb0 = _mm256_setzero_si256(), cb1 = cb0;
    if (e->per_col) {
        const __m256i *mp = (const __m256i *)(e->mult + j0), *sp = (const __m256i *)(e->shift + j0);
        const __m256i *lp = (const __m256i *)(e->lim + j0);
        col0 = be_rqv_make(_mm256_loadu_si256(mp), _mm256_loadu_si256(sp), _mm256_loadu_si256(lp));
        if (NB > 1)
            col1 = be_rqv_make(_mm256_loadu_si256(mp + 1), _mm256_loadu_si256(sp + 1), _mm256_loadu_si256(lp + 1));
        if (e->bias) {
            cb0 = _mm256_loadu_si256((const __m256i *)(e->bias + j0));
            if (NB > 1) cb1 = _mm256_loadu_si256((const __m256i *)(e->bias + j0 + 8));
        }
    }
    for (int r = 0; r < rows; r++) {
        __m128i out;
        if (e->per_col) {
            const __m256i t0 = be_rq8(_mm256_add_epi32(acc[r][0], cb0), &col0);
            out = be_rq_pack16(t0, NB > 1 ? be_rq8(_mm256_add_epi32(acc[r][1], cb1), &col1) : t0, zp16, lo, hi);
        } else {
            const long ch = i0 + r;
            const be_rqv q = be_rqv_bcast(e->mult[ch], e->shift[ch], e->lim[ch]);
            const __m256i bb = _mm256_set1_epi32(e->bias ? e->bias[ch] : 0);
            const __m256i t0 = be_rq8(_mm256_add_epi32(acc[r][0], bb), &q);
            out = be_rq_pack16(t0, NB > 1 ? be_rq8(_mm256_add_epi32(acc[r][1], bb), &q) : t0, zp16, lo, hi);
        }
        if (NB == 1 && nr == 8) {
            _mm_storel_epi64((__m128i *)(y + r * ldy), out);
        } else if (nr == BE_QNR) {
            _mm_storeu_si128((__m128i *)(y + r * ldy), out);
        } else {
            int8_t t[16];
            _mm_storeu_si128((__m128i *)t, out);
            memcpy(y + r * ldy, t, (size_t)nr);
        }
    }
}

#ifdef BE_ISA_X86_VNNI512 /* AVX-512 F/BW/VL are there too */
/* be_rq8 of x86_qgemm.h on 16 lanes (the same steps: clamp, 64-bit products biased by 2^62, flooring shifts).
 * Where every lane has s >= 33 or m == 0 (the usual case: scale ratios below 2^-2), `hi` says so and be_rq16 takes the short
 * form of rq32.h: lim is INT32_MAX there (no clamp), and with P = acc * m the rounding term 2^(s-1) has no low word,
 * so floor((P + 2^(s-1)) / 2^s) = (hi(P) + 2^(s-33)) >> (s-32) exactly (|hi(P)| < 2^30: no overflow); hi(P) of the
 * 16 lanes is two vpmuldq and a masked vpshufd, the rest one add and one vpsravd: 6 operations instead of 12. */
typedef struct {
    __m512i m, mo, se, so, re, ro, c, lim, nlim;
    __m512i hrnd, hsh; /* the short form: 2^(s-33), s-32 */
    int hi;            /* every lane has s >= 33 */
} be_rqv16;

static inline __attribute__((always_inline)) be_rqv16 be_rqv16_make(__m512i m, __m512i s, __m512i lim) {
    const __m512i one = _mm512_set1_epi64(1), off = _mm512_set1_epi64((int64_t)1 << 62);
    be_rqv16 r;
    r.m = m;
    r.mo = _mm512_srli_epi64(m, 32);
    /* lanes of m == 0 (padding past N, or a normalised zero channel) give t = 0 either way: h = 0, and the shifts
     * by counts past 31 give 0 */
    r.hi = (_mm512_cmpge_epi32_mask(s, _mm512_set1_epi32(33)) | _mm512_cmpeq_epi32_mask(m, _mm512_setzero_si512())) ==
           0xFFFF;
    r.hsh = _mm512_sub_epi32(s, _mm512_set1_epi32(32));
    r.hrnd = _mm512_sllv_epi32(_mm512_set1_epi32(1), _mm512_sub_epi32(r.hsh, _mm512_set1_epi32(1)));
    if (r.hi) { /* the general form's constants are not read */
        r.se = r.so = r.re = r.ro = r.c = r.lim = r.nlim = m;
        return r;
    }
    r.se = _mm512_mask_blend_epi32(0xAAAA, s, _mm512_setzero_si512());
    r.so = _mm512_srli_epi64(s, 32);
    r.re = _mm512_add_epi64(_mm512_sllv_epi64(one, _mm512_sub_epi64(r.se, one)), off);
    r.ro = _mm512_add_epi64(_mm512_sllv_epi64(one, _mm512_sub_epi64(r.so, one)), off);
    r.c = _mm512_sllv_epi32(_mm512_set1_epi32(1), _mm512_sub_epi32(_mm512_set1_epi32(62), s));
    r.lim = lim;
    r.nlim = _mm512_sub_epi32(_mm512_setzero_si512(), lim);
    return r;
}

static inline __attribute__((always_inline)) __m512i be_rq16(__m512i acc, const be_rqv16 *r) {
    if (r->hi) {
        const __m512i pe = _mm512_mul_epi32(acc, r->m), po = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), r->mo);
        /* even lanes: the odd dword of pe (its hi word), odd lanes: po's */
        const __m512i h = _mm512_mask_shuffle_epi32(po, 0x5555, pe, (_MM_PERM_ENUM)0xF5);
        return _mm512_srav_epi32(_mm512_add_epi32(h, r->hrnd), r->hsh);
    }
    acc = _mm512_min_epi32(_mm512_max_epi32(acc, r->nlim), r->lim);
    __m512i pe = _mm512_add_epi64(_mm512_mul_epi32(acc, r->m), r->re);
    __m512i po = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(acc, 32), r->mo), r->ro);
    pe = _mm512_srlv_epi64(pe, r->se);
    po = _mm512_srlv_epi64(po, r->so);
    return _mm512_sub_epi32(_mm512_mask_blend_epi32(0xAAAA, pe, _mm512_slli_epi64(po, 32)), r->c);
}

/* 16 int8 outputs of t (be_rq16's result): saturated to int16, + zp with int16 saturation, saturated to int8,
 * clamped to [lo, hi] (be_rq_pack16's steps on one zmm) */
static inline __attribute__((always_inline)) __m128i be_rq_narrow16(__m512i t, __m256i zp16, __m128i lo, __m128i hi) {
    const __m256i p = _mm256_adds_epi16(_mm512_cvtsepi32_epi16(t), zp16);
    return _mm_min_epi8(_mm_max_epi8(_mm256_cvtsepi16_epi8(p), lo), hi);
}

/* be_rq_narrow16 of four vectors at once (rows of a tile): in-lane saturating packs, whose results hold 4 bytes of
 * each input per 128-bit lane, then one dword permute that puts input i in lane i; the same saturations in the same
 * order (int32 -> int16, + zp, int16 -> int8), so the bytes equal four be_rq_narrow16 */
static inline __attribute__((always_inline)) __m512i be_rq_narrow64(__m512i t0, __m512i t1, __m512i t2, __m512i t3,
                                                                   __m512i zp16, __m512i lo, __m512i hi) {
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m512i p01 = _mm512_adds_epi16(_mm512_packs_epi32(t0, t1), zp16);
    const __m512i p23 = _mm512_adds_epi16(_mm512_packs_epi32(t2, t3), zp16);
    const __m512i b = _mm512_min_epi8(_mm512_max_epi8(_mm512_packs_epi16(p01, p23), lo), hi);
    return _mm512_permutexvar_epi32(order, b);
}
#endif

#if defined(BE_ISA_X86_VNNI512) || defined(BE_ISA_X86_AVXVNNI)
/* The VNNI path (qvnni512.c: vpdpbusd on zmm, qavxvnni.c: its VEX form on ymm; one of them per build).
 *
 * vpdpbusd multiplies unsigned bytes by signed bytes, 4 per int32 lane, and adds the 4 products (each in
 * [-32640, 32385]) to the lane without saturation: exact, like the int16 tile. The weights take the unsigned
 * side as u = w + 128 (a flipped sign bit, in [0, 255]), the activations stay raw int8, so
 *     sum_k a(k) * w(k) = sum_k a(k) * u(k) - 128 * sum_k a(k),
 * and the second term (`corr`, per row of A, wrapping int32) is computed where A is packed; NCHW convs swap the
 * roles (qconv.c: activations flipped, the weights' row sums). Both sums wrap modulo 2^32 like the int16 tile's,
 * so the result is the same whenever the exact sum fits int32 (which the spec requires).
 * A panel: aq[kq * BE_QMR + r] = the 4 bytes A(r, 4kq .. 4kq+3) as one int32, zero past K; corr[r].
 */
#define BE_X86_VNNI 1
#ifdef BE_ISA_X86_VNNI512
#define BE_QVNNI_COLS 32 /* columns a pair tile can take: two B panels */
#else
#define BE_QVNNI_COLS 16
#endif

/* rows r < mr of raw int8 A (row r at a + r*lda, K bytes read) as a VNNI A panel and its corrections */
void be_qvnni_pack_a(const int8_t *a, long lda, long K, int mr, int32_t *aq, int32_t *corr);

/* Y(mr x nr) = epilogue(A panel * B + corr): B as k2 int8-pair rows of B panels (qgemm.h), nr <= BE_QVNNI_COLS
 * (past 16 columns: the next panel, k2 * 32 bytes further); the tile flips the weights' sign bits itself. */
void be_qvnni_tile_pairs(long k2, const int32_t *aq, const int32_t *corr, const int8_t *b, int mr, int nr, int8_t *y,
                         long ldy, const be_qepi *e, long i0, long j0);

/* the same with B as kq quads of unsigned bytes (activations + 128) of one 16-column panel: b[kq*64 + 4c + j] */
void be_qvnni_tile_quads(long kq, const int32_t *aq, const int32_t *corr, const uint8_t *b, int mr, int nr,
                         int8_t *y, long ldy, const be_qepi *e, long i0, long j0);
#endif

#endif
