/* int8 depthwise convolution with channels-last (NHWC) rows, vectorised along channels (be_qdwconv_nhwc_i8,
 * multiplier 1), reading an NCHW or NHWC input and writing an NCHW or NHWC output (flags: 1 = input NHWC,
 * 2 = output NHWC); the implicit GEMM of other convs is qconv_nhwc.c.
 *
 * Why: on the small planes of edge CNNs (25x5, 12x12, 6x6) a per-plane depthwise kernel wastes most of its 8-wide
 * runs; with rows = output pixels and columns = channels, vectors run along channels.
 *
 * Per band of output rows (a job: ~32 KiB of padded floats, be_qdw_nhwc_band; bands spread over threads):
 *  1. the input rows the band reads are written, minus x_zp, as floats into a zero-padded NHWC block of C8
 *     (C rounded up to 8) channels per pixel, so every tap of a pixel is at a fixed offset without bounds checks;
 *  2. 8 channels at a time, blocks of 4 output pixels accumulate every tap with float multiply-adds: integers,
 *     exact (sums of at most 512 products of magnitude <= 255 * 128 stay below 2^24, qconv.h), so order,
 *     contraction or vector width change no bit; 3x3 stride-1 kernels (dw_rows3x3) keep the 9 tap weights in
 *     registers and take 4 pixels of a row at a time, each input column loaded once for the pixels that read it;
 *  3. + bias, the exact requantisation rule on 8 lanes (per-channel parameters), stored as 8 int8 channels of a
 *     pixel (NHWC) or scattered into 8 planes (NCHW).
 * Integer results do not depend on the thread count or the band split.
 */
#include "qconv.h"
#include "arm_qgemm.h"
#include "qconv_dw_nhwc_loops.h"

typedef float v8f __attribute__((vector_size(32))); /* one ymm, or two q registers */
static inline __attribute__((always_inline)) v8f ld8(const float *p) {
    v8f v;
    memcpy(&v, p, sizeof v);
    return v;
}
/* a + b * c: one FMA where the target has it (integer-valued products and sums: exact either way) */
static inline __attribute__((always_inline)) v8f fma8(v8f a, v8f b, v8f c) {
    return a + b * c;
}

/* the requantisation constants of 8 channels cb .. cb+7 (per-channel arrays are padded to 16) */
typedef struct {
    be_rqn q0, q1;
    int32x4_t b0, b1;
    int16x8_t zp16;
    int8x8_t lo, hi;
} dwq;

static inline __attribute__((always_inline)) dwq dwq_make(const be_qepi *e, long cb) {
    dwq d;
    d.q0 = be_rqn_make(vld1q_s32(e->mult + cb), vld1q_s32(e->shift + cb), vld1q_s32(e->lim + cb));
    d.q1 = be_rqn_make(vld1q_s32(e->mult + cb + 4), vld1q_s32(e->shift + cb + 4), vld1q_s32(e->lim + cb + 4));
    d.b0 = e->bias ? vld1q_s32(e->bias + cb) : vdupq_n_s32(0);
    d.b1 = e->bias ? vld1q_s32(e->bias + cb + 4) : vdupq_n_s32(0);
    d.zp16 = vdupq_n_s16((int16_t)e->zp);
    d.lo = vdup_n_s8((int8_t)e->lo);
    d.hi = vdup_n_s8((int8_t)e->hi);
    return d;
}

/* requantise 8 channels of one pixel (integer-valued floats) and store n of them, dstride apart */
static inline __attribute__((always_inline)) void dw_out8(const float *acc, const dwq *d, int n, int8_t *dst,
                                                          long dstride) {
    int8_t out[8];
    const int32x4_t v0 = vaddq_s32(vcvtq_s32_f32(vld1q_f32(acc)), d->b0);
    const int32x4_t v1 = vaddq_s32(vcvtq_s32_f32(vld1q_f32(acc + 4)), d->b1);
    const int8x8_t r = be_rqn_pack8(be_rq4n(v0, &d->q0), be_rq4n(v1, &d->q1), d->zp16, d->lo, d->hi);
    if (n == 8 && dstride == 1) {
        vst1_s8(dst, r);
        return;
    }
    vst1_s8(out, r);
    for (int i = 0; i < n; i++) dst[i * dstride] = out[i];
}

/* four output pixels of a 3x3 stride-1 row, channels of one 8-block: the input rows start at r, r + rs, r + 2*rs,
 * consecutive pixels c8 floats apart; each input column is loaded once and meets the (up to 3) pixels reading it
 * (sums of integers below 2^24: exact in any order) */
static inline __attribute__((always_inline)) void dw_four3x3(const float *r, long rs, long c8, const v8f *wv,
                                                             v8f *o) {
    v8f a0 = {0, 0, 0, 0, 0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0;
    for (int ky = 0; ky < 3; ky++) {
        const float *q = r + ky * rs;
        const v8f k0 = wv[ky * 3], k1 = wv[ky * 3 + 1], k2 = wv[ky * 3 + 2];
        v8f x = ld8(q);
        a0 = fma8(a0, k0, x);
        x = ld8(q + c8);
        a0 = fma8(a0, k1, x);
        a1 = fma8(a1, k0, x);
        x = ld8(q + 2 * c8);
        a0 = fma8(a0, k2, x);
        a1 = fma8(a1, k1, x);
        a2 = fma8(a2, k0, x);
        x = ld8(q + 3 * c8);
        a1 = fma8(a1, k2, x);
        a2 = fma8(a2, k1, x);
        a3 = fma8(a3, k0, x);
        x = ld8(q + 4 * c8);
        a2 = fma8(a2, k2, x);
        a3 = fma8(a3, k1, x);
        x = ld8(q + 5 * c8);
        a3 = fma8(a3, k2, x);
    }
    o[0] = a0, o[1] = a1, o[2] = a2, o[3] = a3;
}

/* 3x3, stride 1, no dilation, OW >= 4: output rows oy0 .. oy1-1, the 9 tap weights of each 8-channel block in
 * registers, 4 pixels of a row at a time (each input column loaded once), the rest of a row one by one.
 * Out of line with few live values (an inlined variant-rich loop spills). */
static __attribute__((noinline)) void dw_rows3x3(const float *buf, long wp, long c8, const be_qconv_geo *g,
                                                 const float *wf, const be_qepi *e, long oy0, long oy1, int out_nhwc,
                                                 int8_t *yi) {
    const long OW = g->OW, ohw = (long)g->OH * OW, C = g->C, rs = wp * c8;
    for (long cb = 0; cb < C; cb += 8) {
        const int n = (int)(C - cb < 8 ? C - cb : 8);
        const dwq q = dwq_make(e, cb);
        v8f wv[9];
        for (int t = 0; t < 9; t++) wv[t] = ld8(wf + (long)t * c8 + cb);
        for (long oy = oy0; oy < oy1; oy++) {
            const float *r0 = buf + (oy - oy0) * rs + cb;
            const long p = oy * OW;
            long ox = 0;
            float acc[4][8];
            for (; ox + 4 <= OW; ox += 4) {
                v8f o[4];
                dw_four3x3(r0 + ox * c8, rs, c8, wv, o);
                memcpy(acc, o, sizeof acc);
                for (int i = 0; i < 4; i++) {
                    if (out_nhwc)
                        dw_out8(acc[i], &q, n, yi + (p + ox + i) * C + cb, 1);
                    else
                        dw_out8(acc[i], &q, n, yi + cb * ohw + p + ox + i, ohw);
                }
            }
            for (; ox < OW; ox++) {
                v8f a = {0, 0, 0, 0, 0, 0, 0, 0};
                for (int t = 0; t < 9; t++) a = fma8(a, wv[t], ld8(r0 + (t / 3) * rs + (ox + t % 3) * c8));
                memcpy(acc[0], &a, sizeof a);
                if (out_nhwc)
                    dw_out8(acc[0], &q, n, yi + (p + ox) * C + cb, 1);
                else
                    dw_out8(acc[0], &q, n, yi + cb * ohw + p + ox, ohw);
            }
        }
    }
}

/* output rows oy0 .. oy1-1 of one image from its filled band (padded row oy0*sh at buf row 0) */
static void dw_band(const float *buf, long wp, long c8, const be_qconv_geo *g, const long *off, const float *wf,
                    const be_qepi *e, long oy0, long oy1, int out_nhwc, int8_t *yi) {
    const int taps = g->KH * g->KW;
    const long ohw = (long)g->OH * g->OW, npix = (oy1 - oy0) * g->OW, C = g->C;
    if (g->KH == 3 && g->KW == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1 && g->OW >= 4) {
        dw_rows3x3(buf, wp, c8, g, wf, e, oy0, oy1, out_nhwc, yi);
        return;
    }
    for (long cb = 0; cb < C; cb += 8) {
        const int n = (int)(C - cb < 8 ? C - cb : 8);
        const dwq q = dwq_make(e, cb);
        for (long p0 = 0; p0 < npix; p0 += DP) {
            const int np = (int)(npix - p0 < DP ? npix - p0 : DP);
            const float *base[DP];
            float acc[DP][8];
            for (int i = 0; i < DP; i++) {
                const long p = p0 + (i < np ? i : 0), oy = p / g->OW, ox = p % g->OW;
                base[i] = buf + ((oy * g->sh) * wp + ox * g->sw) * c8 + cb;
                for (int l = 0; l < 8; l++) acc[i][l] = 0.0f;
            }
            v8f va[DP];
            for (int i = 0; i < DP; i++) va[i] = (v8f){0, 0, 0, 0, 0, 0, 0, 0};
            for (int t = 0; t < taps; t++) {
                const v8f w = ld8(wf + (long)t * c8 + cb);
                for (int i = 0; i < DP; i++) va[i] = fma8(va[i], ld8(base[i] + off[t]), w);
            }
            for (int i = 0; i < DP; i++) memcpy(acc[i], &va[i], sizeof(v8f));
            for (int i = 0; i < np; i++) {
                const long p = oy0 * g->OW + p0 + i;
                if (out_nhwc)
                    dw_out8(acc[i], &q, n, yi + p * C + cb, 1);
                else
                    dw_out8(acc[i], &q, n, yi + cb * ohw + p, ohw);
            }
        }
    }
}
