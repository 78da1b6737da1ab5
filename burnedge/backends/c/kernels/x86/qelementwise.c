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
 * Every element reads its operands before its output is written, so outputs may alias same-shaped inputs.
 */
#include "qelementwise.h"
#include "x86_qgemm.h"

static inline int8_t qadd1(int32_t a, int32_t b, const be_qbin *p) {
    const int64_t v = (int64_t)(a - p->a_zp) * p->am + (int64_t)(b - p->b_zp) * p->bm;
    const int64_t y = p->y_zp + ((v + ((int64_t)1 << (p->shift - 1))) >> p->shift);
    return (int8_t)(y < p->lo ? p->lo : (y > p->hi ? p->hi : y));
}

static inline int8_t qmul1(int32_t a, int32_t b, const be_qbin *p) {
    return be_rq1((a - p->a_zp) * (b - p->b_zp), p->m, p->s, p->lim, p->y_zp, p->lo, p->hi);
}

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


static void row(const int8_t *a, long sa, const int8_t *b, long sb, int8_t *y, long n, const be_qbin *p) {
    long i = 0;
    if ((sa == 0 || sa == 1) && (sb == 0 || sb == 1) && (p->op == BE_QMUL || p->shift >= 10)) {
        const __m256i azp = _mm256_set1_epi32(p->a_zp), bzp = _mm256_set1_epi32(p->b_zp);
        const __m256i zp16 = _mm256_set1_epi16((int16_t)p->y_zp);
        const __m128i lo = _mm_set1_epi8((int8_t)p->lo), hi = _mm_set1_epi8((int8_t)p->hi);
        const __m256i am = _mm256_set1_epi64x(p->am), bm = _mm256_set1_epi64x(p->bm);
        const __m256i r = _mm256_set1_epi64x(((int64_t)1 << (p->shift - 1)) + ((int64_t)1 << 62));
        const __m128i cnt = _mm_cvtsi32_si128(p->shift);
        const __m256i c = _mm256_set1_epi32((int32_t)(uint32_t)((uint64_t)1 << (62 - p->shift)));
        const be_rqv q = be_rqv_bcast(p->m, p->s, p->lim);
        for (; i + 16 <= n; i += 16) {
            const __m256i a0 = _mm256_sub_epi32(load8(a, sa, i), azp), a1 = _mm256_sub_epi32(load8(a, sa, i + 8), azp);
            const __m256i b0 = _mm256_sub_epi32(load8(b, sb, i), bzp), b1 = _mm256_sub_epi32(load8(b, sb, i + 8), bzp);
            __m256i t0, t1;
            if (p->op == BE_QADD) {
                t0 = qadd8(a0, b0, am, bm, r, cnt, c);
                t1 = qadd8(a1, b1, am, bm, r, cnt, c);
            } else {
                t0 = be_rq8(_mm256_mullo_epi32(a0, b0), &q);
                t1 = be_rq8(_mm256_mullo_epi32(a1, b1), &q);
            }
            _mm_storeu_si128((__m128i *)(y + i), be_rq_pack16(t0, t1, zp16, lo, hi));
        }
    }
    if (p->op == BE_QADD)
        for (; i < n; i++) y[i] = qadd1(a[i * sa], b[i * sb], p);
    else
        for (; i < n; i++) y[i] = qmul1(a[i * sa], b[i * sb], p);
}

void be_qbinary_i8(const int8_t *a, const int8_t *b, int8_t *y, int nd, const long *shape, const long *sa,
                   const long *sb, const be_qbin *p, int threads) {
    const long n = nd ? shape[nd - 1] : 1, piece = 4096;
    long rows = 1;
    for (int d = 0; d + 1 < nd; d++) rows *= shape[d];
    const long pieces = (n + piece - 1) / piece, items = rows * pieces;
    const long ia = nd ? sa[nd - 1] : 0, ib = nd ? sb[nd - 1] : 0;
    const int par = threads > 1 && rows * n > 32768 && items > 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (par)
    for (long it = 0; it < items; it++) {
        long r = it / pieces, oa = 0, ob = 0;
        const long j0 = (it % pieces) * piece, len = n - j0 < piece ? n - j0 : piece;
        const long yo = r * n + j0;
        for (int d = nd - 2; d >= 0; d--) {
            const long k = r % shape[d];
            r /= shape[d];
            oa += k * sa[d];
            ob += k * sb[d];
        }
        row(a + oa + j0 * ia, ia, b + ob + j0 * ib, ib, y + yo, len, p);
    }
}

void be_qlut_i8(const int8_t *x, int8_t *y, const int8_t *table, long n, int threads) {
    const int par = threads > 1 && n > 65536;
#pragma omp parallel for num_threads(threads) schedule(static) if (par)
    for (long i = 0; i < n; i++) y[i] = table[x[i] + 128];
}

void be_qrequant_i8(const int8_t *x, int8_t *y, long n, int32_t x_zp, int32_t y_zp, int32_t m, int32_t s,
                    int32_t lim, int threads) {
    const long piece = 4096, items = (n + piece - 1) / piece;
    const int par = threads > 1 && n > 32768;
#pragma omp parallel for num_threads(threads) schedule(static) if (par)
    for (long it = 0; it < items; it++) {
        long i = it * piece;
        const long end = i + piece < n ? i + piece : n;
        const __m256i xzp = _mm256_set1_epi32(x_zp), zp16 = _mm256_set1_epi16((int16_t)y_zp);
        const __m128i lo = _mm_set1_epi8(-128), hi = _mm_set1_epi8(127);
        const be_rqv q = be_rqv_bcast(m, s, lim);
        for (; i + 16 <= end; i += 16) {
            const __m256i t0 = be_rq8(_mm256_sub_epi32(load8(x, 1, i), xzp), &q);
            const __m256i t1 = be_rq8(_mm256_sub_epi32(load8(x, 1, i + 8), xzp), &q);
            _mm_storeu_si128((__m128i *)(y + i), be_rq_pack16(t0, t1, zp16, lo, hi));
        }
        for (; i < end; i++) y[i] = be_rq1(x[i] - x_zp, m, s, lim, y_zp, -128, 127);
    }
}
