/* Internal to the ARM kernel set: the NEON int8 tiles' declarations and the requantisation on 4 lanes (exactly
 * qgemm.h's rule), shared by qgemm.c, qconv*.c and qelementwise.c. */
#ifndef BURNEDGE_ARM_QGEMM_H
#define BURNEDGE_ARM_QGEMM_H

#include "arm_simd.h"
#include "qgemm.h"

/* ARM (qgemm.c): the int16-pair tile with vmlal_lane_s16 (every NEON target) and, where the compiler has
 * BE_ISA_DOTPROD (aarch64), an sdot tile on int8 quads: A quads [kq][r][4] (24 bytes per kq: rows 0..5,
 * k = 4kq..4kq+3, zero-padded), B either pair panels (made into quads in registers by 16-bit zips of two pair
 * blocks) or quad panels b[kq*64 + 4c + j] = B(4kq + j, c). Quads are only ever made at run time (QMatMul's
 * activations, QConv's im2col and its weights converted per panel), so packed weights stay the same everywhere. */
void be_qgemm_tile_neon(long k2, const int16_t *a, const int8_t *b, int mr, int nr, int8_t *y, long ldy,
                        const be_qepi *e, long i0, long j0);
void be_qgemm_tile_sdot(long k2, const int8_t *a4, const int8_t *b, int bquads, int mr, int nr, int8_t *y, long ldy,
                        const be_qepi *e, long i0, long j0);
/* an A panel of int16 pairs (values in int8's range) as int8 quads */
void be_qa_quads(const int16_t *a, long k2, int8_t *dst);



/* requantisation constants of 4 lanes: m, the accumulator clamp, per 2-lane half the rounding term 2^(s-1) and
 * the shift count -s (vshlq_s64 by a negative count is an arithmetic, flooring right shift), and for the usual
 * case of every lane's s >= 32 with no clamp (`hi`: lim = INT32_MAX, as rq_params makes it for s >= 32) the count
 * 31 - s of the short form (be_rq4n) */
typedef struct {
    int32x4_t m, lim, nlim, nhi;
    int64x2_t r0, r1, ns0, ns1;
    int hi;
} be_rqn;

static inline __attribute__((always_inline)) int be_min4(int32x4_t v) {
    int32x2_t p = vpmin_s32(vget_low_s32(v), vget_high_s32(v));
    return vget_lane_s32(vpmin_s32(p, p), 0);
}

static inline __attribute__((always_inline)) be_rqn be_rqn_make(int32x4_t m, int32x4_t s, int32x4_t lim) {
    const int64x2_t one = vdupq_n_s64(1);
    const int32x4_t sm1 = vsubq_s32(s, vdupq_n_s32(1)), ns = vnegq_s32(s);
    be_rqn r;
    r.m = m;
    r.lim = lim;
    r.nlim = vnegq_s32(lim);
    r.nhi = vsubq_s32(vdupq_n_s32(31), s);
    r.hi = be_min4(s) >= 32 && be_min4(lim) == INT32_MAX;
    r.r0 = vshlq_s64(one, vmovl_s32(vget_low_s32(sm1)));
    r.r1 = vshlq_s64(one, vmovl_s32(vget_high_s32(sm1)));
    r.ns0 = vmovl_s32(vget_low_s32(ns));
    r.ns1 = vmovl_s32(vget_high_s32(ns));
    return r;
}

static inline __attribute__((always_inline)) be_rqn be_rqn_bcast(int32_t m, int32_t s, int32_t lim) {
    return be_rqn_make(vdupq_n_s32(m), vdupq_n_s32(s), vdupq_n_s32(lim));
}

/* t = floor((clamp(acc) * m + 2^(s-1)) / 2^s) on 4 lanes, exactly the rule (qgemm.h be_rq1):
 *  - every s >= 32, lim = INT32_MAX (`hi`): 2^(s-1) is a multiple of 2^31, so with D = floor(a * m / 2^31)
 *    (vqdmulhq_s32: the high word of 2am, exact: 0 <= m < 2^31 never meets the one saturating case INT32_MIN^2)
 *    t = floor((D + 2^(s-32)) / 2^(s-31)), the rounding shift vrshlq_s32 by 31 - s: two instructions. The clamp
 *    to +-INT32_MAX changes only INT32_MIN, whose D (-m, as for -INT32_MAX) it leaves alone: no clamp;
 *  - else 64-bit vmull_s32 products and flooring shifts (no vqrdmulh, whose rounding differs);
 * |t| < 2^30 by the choice of lim, so the narrowing keeps every bit */
static inline __attribute__((always_inline)) int32x4_t be_rq4n_hi(int32x4_t acc, const be_rqn *q) {
    return vrshlq_s32(vqdmulhq_s32(acc, q->m), q->nhi);
}

static inline __attribute__((always_inline)) int32x4_t be_rq4n(int32x4_t acc, const be_rqn *q) {
    if (q->hi) return be_rq4n_hi(acc, q);
    acc = vminq_s32(vmaxq_s32(acc, q->nlim), q->lim);
    int64x2_t p0 = vaddq_s64(vmull_s32(vget_low_s32(acc), vget_low_s32(q->m)), q->r0);
    int64x2_t p1 = vaddq_s64(vmull_s32(vget_high_s32(acc), vget_high_s32(q->m)), q->r1);
    return vcombine_s32(vmovn_s64(vshlq_s64(p0, q->ns0)), vmovn_s64(vshlq_s64(p1, q->ns1)));
}

/* 8 int8 outputs from two vectors of t: saturating narrowing, + zp (saturating int16), then [lo, hi] */
static inline __attribute__((always_inline)) int8x8_t be_rqn_pack8(int32x4_t t0, int32x4_t t1, int16x8_t zp16,
                                                                   int8x8_t lo, int8x8_t hi) {
    const int16x8_t h = vqaddq_s16(vcombine_s16(vqmovn_s32(t0), vqmovn_s32(t1)), zp16);
    return vmin_s8(vmax_s8(vqmovn_s16(h), lo), hi);
}

/* n (<= 8) int8 values to dst */
static inline __attribute__((always_inline)) void be_store8n(int8_t *dst, int8x8_t v, int n) {
    if (n == 8) {
        vst1_s8(dst, v);
    } else {
        int8_t t[8];
        vst1_s8(t, v);
        memcpy(dst, t, (size_t)n);
    }
}

#endif
