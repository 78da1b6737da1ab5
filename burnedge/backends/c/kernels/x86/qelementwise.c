/* int8 elementwise kernels: QAdd / QMul with broadcasting, QLut, QRequant (QuantizeLinear and
 * DequantizeLinear: quantize.c).
 *
 * Algorithm (binary ops):
 *  1. the output is cut into work items (one row of the innermost dimension, or a 4096-element piece of it);
 *     an item finds its operands' offsets from its row index and the per-dimension strides;
 *  2. a row whose operands step by 0 or 1 runs 16 lanes at a time: widen to int32, subtract the zero points;
 *     QAdd forms both 64-bit products (_mm256_mul_epi32 on even and odd lanes), adds them and the rounding term
 *     biased by 2^62, shifts logically and removes the bias in 32 bits (exact: |result| < 2^31 when shift >= 10,
 *     smaller shifts take the scalar path); QMul multiplies in int32 and requantises like the GEMM epilogue;
 *  3. tails and strided rows run the scalar rule (int64).
 * NEON runs step 2 on 8 lanes: QAdd with vmull_s32/vmlal_s32 into int64, a flooring vshlq_s64 and saturating
 * narrowing (exact for every shift: past int32 the output saturates anyway); QMul and QRequant with be_rq4n.
 * QLut with AVX-512 VBMI: 64 lookups per step from the table held in four registers (vpermi2b).
 * Every element reads its operands before its output is written, so outputs may alias same-shaped inputs.
 */
#include "qelementwise.h"
#include "x86_qgemm.h"

#include "qelementwise_common.h"

static inline __attribute__((always_inline)) __m256i load8(const int8_t *x, long s, long i) {
    return s ? _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(x + i))) : _mm256_set1_epi32(x[0]);
}

/* QAdd's t on 8 lanes (a, b already minus their zero points) */
static inline __attribute__((always_inline)) __m256i qadd8(__m256i a, __m256i b, __m256i am, __m256i bm, __m256i r,
                                                           __m128i cnt, __m256i c) {
    __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(a, am), _mm256_mul_epi32(b, bm));
    __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), am),
                                  _mm256_mul_epi32(_mm256_srli_epi64(b, 32), bm));
    pe = _mm256_srl_epi64(_mm256_add_epi64(pe, r), cnt);
    po = _mm256_srl_epi64(_mm256_add_epi64(po, r), cnt);
    return _mm256_sub_epi32(_mm256_blend_epi32(pe, _mm256_slli_epi64(po, 32), 0xAA), c);
}

/* row: the set's vector head (i advanced past it), before the scalar rule */
#define QBIN_ROW_VEC()                                                                                                 \
    if ((sa == 0 || sa == 1) && (sb == 0 || sb == 1) && (p->op == BE_QMUL || p->shift >= 10)) {                        \
        const __m256i azp = _mm256_set1_epi32(p->a_zp), bzp = _mm256_set1_epi32(p->b_zp);                              \
        const __m256i zp16 = _mm256_set1_epi16((int16_t)p->y_zp);                                                      \
        const __m128i lo = _mm_set1_epi8((int8_t)p->lo), hi = _mm_set1_epi8((int8_t)p->hi);                            \
        const __m256i am = _mm256_set1_epi64x(p->am), bm = _mm256_set1_epi64x(p->bm);                                  \
        const __m256i r = _mm256_set1_epi64x(((int64_t)1 << (p->shift - 1)) + ((int64_t)1 << 62));                     \
        const __m128i cnt = _mm_cvtsi32_si128(p->shift);                                                               \
        const __m256i c = _mm256_set1_epi32((int32_t)(uint32_t)((uint64_t)1 << (62 - p->shift)));                      \
        const be_rqv q = be_rqv_bcast(p->m, p->s, p->lim);                                                             \
        for (; i + 16 <= n; i += 16) {                                                                                 \
            const __m256i a0 = _mm256_sub_epi32(load8(a, sa, i), azp), a1 = _mm256_sub_epi32(load8(a, sa, i + 8), azp);\
            const __m256i b0 = _mm256_sub_epi32(load8(b, sb, i), bzp), b1 = _mm256_sub_epi32(load8(b, sb, i + 8), bzp);\
            __m256i t0, t1;                                                                                            \
            if (p->op == BE_QADD) {                                                                                    \
                t0 = qadd8(a0, b0, am, bm, r, cnt, c);                                                                 \
                t1 = qadd8(a1, b1, am, bm, r, cnt, c);                                                                 \
            } else {                                                                                                   \
                t0 = be_rq8(_mm256_mullo_epi32(a0, b0), &q);                                                           \
                t1 = be_rq8(_mm256_mullo_epi32(a1, b1), &q);                                                           \
            }                                                                                                          \
            _mm_storeu_si128((__m128i *)(y + i), be_rq_pack16(t0, t1, zp16, lo, hi));                                  \
        }                                                                                                              \
    }

/* be_qrequant_i8: the set's vector head of an item (i advanced past it) */
#define QREQ_VEC()                                                                                                     \
    const __m256i xzp = _mm256_set1_epi32(x_zp), zp16 = _mm256_set1_epi16((int16_t)y_zp);                              \
    const __m128i lo = _mm_set1_epi8(-128), hi = _mm_set1_epi8(127);                                                   \
    const be_rqv q = be_rqv_bcast(m, s, lim);                                                                          \
    for (; i + 16 <= end; i += 16) {                                                                                   \
        const __m256i t0 = be_rq8(_mm256_sub_epi32(load8(x, 1, i), xzp), &q);                                          \
        const __m256i t1 = be_rq8(_mm256_sub_epi32(load8(x, 1, i + 8), xzp), &q);                                      \
        _mm_storeu_si128((__m128i *)(y + i), be_rq_pack16(t0, t1, zp16, lo, hi));                                      \
    }

#ifdef BE_ISA_X86_VBMI
/* be_qlut_i8 on 64 bytes at a time: the table in four zmm; two vpermi2b each look up 128 entries by an index's
 * low 7 bits (u = x + 128 as a byte), the index's top bit picks one of the two */
#define QLUT_VEC()                                                                                                     \
    const __m512i t0 = _mm512_loadu_si512((const void *)table), t1 = _mm512_loadu_si512((const void *)(table + 64));   \
    const __m512i t2 = _mm512_loadu_si512((const void *)(table + 128));                                                \
    const __m512i t3 = _mm512_loadu_si512((const void *)(table + 192)), flip = _mm512_set1_epi8((char)0x80);          \
    for (; i + 64 <= hi; i += 64) {                                                                                    \
        const __m512i u = _mm512_xor_si512(_mm512_loadu_si512((const void *)(x + i)), flip);                           \
        const __m512i lo7 = _mm512_permutex2var_epi8(t0, u, t1), hi7 = _mm512_permutex2var_epi8(t2, u, t3);            \
        _mm512_storeu_si512((void *)(y + i), _mm512_mask_blend_epi8(_mm512_movepi8_mask(u), lo7, hi7));                \
    }
#endif

#include "qelementwise_loops.h"
