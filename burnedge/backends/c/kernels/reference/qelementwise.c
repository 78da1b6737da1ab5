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

static inline int8_t qadd1(int32_t a, int32_t b, const be_qbin *p) {
    const int64_t v = (int64_t)(a - p->a_zp) * p->am + (int64_t)(b - p->b_zp) * p->bm;
    const int64_t y = p->y_zp + ((v + ((int64_t)1 << (p->shift - 1))) >> p->shift);
    return (int8_t)(y < p->lo ? p->lo : (y > p->hi ? p->hi : y));
}

static inline int8_t qmul1(int32_t a, int32_t b, const be_qbin *p) {
    return be_rq1((a - p->a_zp) * (b - p->b_zp), p->m, p->s, p->lim, p->y_zp, p->lo, p->hi);
}



static void row(const int8_t *a, long sa, const int8_t *b, long sb, int8_t *y, long n, const be_qbin *p) {
    long i = 0;
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
        for (; i < end; i++) y[i] = be_rq1(x[i] - x_zp, m, s, lim, y_zp, -128, 127);
    }
}
