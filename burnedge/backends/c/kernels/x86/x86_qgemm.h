/* Internal to the x86 kernel set: the AVX2 requantisation of the int8 kernels (exactly qgemm.h's rule on 8
 * lanes), shared by qgemm.c, qconv*.c and qelementwise.c. */
#ifndef BURNEDGE_X86_QGEMM_H
#define BURNEDGE_X86_QGEMM_H

#include "qgemm.h"
#include "x86_simd.h"

/* requantisation constants of 8 lanes (one channel per lane, or one channel broadcast) */
typedef struct {
    __m256i m, mo, se, so, re, ro, c, lim, nlim;
} be_rqv;

static inline __attribute__((always_inline)) be_rqv be_rqv_make(__m256i m, __m256i s, __m256i lim) {
    const __m256i one = _mm256_set1_epi64x(1), off = _mm256_set1_epi64x((int64_t)1 << 62);
    be_rqv r;
    r.m = m;
    r.mo = _mm256_srli_epi64(m, 32);
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
 * shift floors them; the bias (2^(62-s) after the shift) is removed in 32 bits, exact since |t| < 2^31. */
static inline __attribute__((always_inline)) __m256i be_rq8(__m256i acc, const be_rqv *r) {
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

#endif
