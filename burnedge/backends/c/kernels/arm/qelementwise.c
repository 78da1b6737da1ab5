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
#include "arm_qgemm.h"

static inline int8_t qadd1(int32_t a, int32_t b, const be_qbin *p) {
    const int64_t v = (int64_t)(a - p->a_zp) * p->am + (int64_t)(b - p->b_zp) * p->bm;
    const int64_t y = p->y_zp + ((v + ((int64_t)1 << (p->shift - 1))) >> p->shift);
    return (int8_t)(y < p->lo ? p->lo : (y > p->hi ? p->hi : y));
}

static inline int8_t qmul1(int32_t a, int32_t b, const be_qbin *p) {
    return be_rq1((a - p->a_zp) * (b - p->b_zp), p->m, p->s, p->lim, p->y_zp, p->lo, p->hi);
}


static inline __attribute__((always_inline)) int16x8_t load8n(const int8_t *x, long s, long i, int16x8_t zp) {
    return vsubq_s16(vmovl_s8(s ? vld1_s8(x + i) : vdup_n_s8(x[0])), zp);
}

/* QAdd's t of 4 lanes (a, b minus their zero points), saturated to int32 */
static inline __attribute__((always_inline)) int32x4_t qadd4(int16x4_t a, int16x4_t b, int32x2_t am, int32x2_t bm,
                                                             int64x2_t r, int64x2_t ns) {
    const int32x4_t a32 = vmovl_s16(a), b32 = vmovl_s16(b);
    const int64x2_t v0 = vmlal_s32(vmull_s32(vget_low_s32(a32), am), vget_low_s32(b32), bm);
    const int64x2_t v1 = vmlal_s32(vmull_s32(vget_high_s32(a32), am), vget_high_s32(b32), bm);
    return vcombine_s32(vqmovn_s64(vshlq_s64(vaddq_s64(v0, r), ns)), vqmovn_s64(vshlq_s64(vaddq_s64(v1, r), ns)));
}

/* the first n - n % 8 elements of a row whose operands step by 0 or 1; returns how many it did */
long be_qbinary_neon_row(const int8_t *a, long sa, const int8_t *b, long sb, int8_t *y, long n, const be_qbin *p) {
    const int16x8_t azp = vdupq_n_s16((int16_t)p->a_zp), bzp = vdupq_n_s16((int16_t)p->b_zp);
    const int16x8_t zp16 = vdupq_n_s16((int16_t)p->y_zp);
    const int8x8_t lo = vdup_n_s8((int8_t)p->lo), hi = vdup_n_s8((int8_t)p->hi);
    const int32x2_t am = vdup_n_s32(p->am), bm = vdup_n_s32(p->bm);
    const int64x2_t r = vdupq_n_s64((int64_t)1 << (p->shift - 1)), ns = vdupq_n_s64(-p->shift);
    const be_rqn q = be_rqn_bcast(p->m, p->s, p->lim);
    long i = 0;
    for (; i + 8 <= n; i += 8) {
        const int16x8_t va = load8n(a, sa, i, azp), vb = load8n(b, sb, i, bzp);
        int32x4_t t0, t1;
        if (p->op == BE_QADD) {
            t0 = qadd4(vget_low_s16(va), vget_low_s16(vb), am, bm, r, ns);
            t1 = qadd4(vget_high_s16(va), vget_high_s16(vb), am, bm, r, ns);
        } else {
            t0 = be_rq4n(vmull_s16(vget_low_s16(va), vget_low_s16(vb)), &q);
            t1 = be_rq4n(vmull_s16(vget_high_s16(va), vget_high_s16(vb)), &q);
        }
        vst1_s8(y + i, be_rqn_pack8(t0, t1, zp16, lo, hi));
    }
    return i;
}

static void row(const int8_t *a, long sa, const int8_t *b, long sb, int8_t *y, long n, const be_qbin *p) {
    long i = 0;
    if ((sa == 0 || sa == 1) && (sb == 0 || sb == 1)) i = be_qbinary_neon_row(a, sa, b, sb, y, n, p);
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
        const int16x8_t xzp = vdupq_n_s16((int16_t)x_zp), zp16 = vdupq_n_s16((int16_t)y_zp);
        const be_rqn q = be_rqn_bcast(m, s, lim);
        for (; i + 8 <= end; i += 8) {
            const int16x8_t v = vsubq_s16(vmovl_s8(vld1_s8(x + i)), xzp);
            const int32x4_t t0 = be_rq4n(vmovl_s16(vget_low_s16(v)), &q), t1 = be_rq4n(vmovl_s16(vget_high_s16(v)), &q);
            vst1_s8(y + i, be_rqn_pack8(t0, t1, zp16, vdup_n_s8(-128), vdup_n_s8(127)));
        }
        for (; i < end; i++) y[i] = be_rq1(x[i] - x_zp, m, s, lim, y_zp, -128, 127);
    }
}
