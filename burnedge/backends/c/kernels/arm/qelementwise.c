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

#include "qelementwise_common.h"

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

/* row: the set's vector head (i advanced past it), before the scalar rule */
#define QBIN_ROW_VEC()                                                                                                 \
    if ((sa == 0 || sa == 1) && (sb == 0 || sb == 1)) i = be_qbinary_neon_row(a, sa, b, sb, y, n, p);

/* be_qrequant_i8: the set's vector head of an item (i advanced past it) */
#define QREQ_VEC()                                                                                                     \
    const int16x8_t xzp = vdupq_n_s16((int16_t)x_zp), zp16 = vdupq_n_s16((int16_t)y_zp);                               \
    const be_rqn q = be_rqn_bcast(m, s, lim);                                                                          \
    for (; i + 8 <= end; i += 8) {                                                                                     \
        const int16x8_t v = vsubq_s16(vmovl_s8(vld1_s8(x + i)), xzp);                                                  \
        const int32x4_t t0 = be_rq4n(vmovl_s16(vget_low_s16(v)), &q), t1 = be_rq4n(vmovl_s16(vget_high_s16(v)), &q);   \
        vst1_s8(y + i, be_rqn_pack8(t0, t1, zp16, vdup_n_s8(-128), vdup_n_s8(127)));                                   \
    }

#include "qelementwise_loops.h"
