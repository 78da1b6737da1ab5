/* int8 depthwise convolution with channels-last rows for Cortex-M cores with Helium and its float lanes (M55):
 * the float band and driver of reference/qconv_dw_nhwc.c (qconv_dw_nhwc_loops.h), 4 channels per q register,
 * and the requantisation in q registers; results are the reference's bit for bit.
 *
 * dw_band, per group of 4 channels (C8 is a multiple of 8; channels past C have zero weights and are not stored):
 *  1. per output pixel and tap, VFMA adds the band's 4 values times the tap's 4 weights: the products and sums
 *     are integers below 2^24 (qconv.h), so float arithmetic is exact, as in the reference;
 *  2. the 4 sums become int32 (exact) + bias, then the rule of qgemm.h in 32-bit lanes when every channel of the
 *     group has s >= 33 (rq32.h's case: VMULH gives the product's high word, + 2^(s-33), an arithmetic shift by
 *     s-32, + zp, clamp), else be_rq1_32 per channel; 4 int8 stored by a predicated narrowing store (NHWC) or a
 *     predicated scatter, ohw apart (NCHW).
 */
#include "qconv.h"
#include "cm_mve.h"
#include "rq32.h"
#include "qconv_dw_nhwc_loops.h"

#ifndef BE_ISA_MVE_FLOAT
#error "the Helium depthwise kernel needs MVE's float lanes (an M55 with its FPU): build the reference set alone"
#endif

static void dw_band(const float *buf, long wp, long c8, const be_qconv_geo *g, const long *off, const float *wf,
                    const be_qepi *e, long oy0, long oy1, int out_nhwc, int8_t *yi) {
    const int taps = g->KH * g->KW;
    const long ohw = (long)g->OH * g->OW, OW = g->OW, C = g->C;
    const long sy = (long)g->sh * wp * c8, sx = (long)g->sw * c8;
    const int32x4_t zero = vdupq_n_s32(0), zp = vdupq_n_s32(e->zp);
    const int32x4_t lo = vdupq_n_s32(e->lo), hi = vdupq_n_s32(e->hi);
    const uint32x4_t scatter = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)(out_nhwc ? 1 : ohw));
    for (long c = 0; c < C; c += 4) {
        const int n = (int)(C - c < 4 ? C - c : 4);
        const mve_pred16_t keep = vctp32q((uint32_t)n);
        const int32x4_t bias = e->bias ? vld1q_s32(e->bias + c) : zero; /* channel arrays are padded to 16 */
        const int32x4_t m = vld1q_s32(e->mult + c), s = vld1q_s32(e->shift + c);
        const int wide = vminvq_s32(INT32_MAX, vpselq_s32(s, vdupq_n_s32(INT32_MAX), keep)) >= 33;
        const int32x4_t rnd = vshlq_s32(vdupq_n_s32(1), vsubq_s32(s, vdupq_n_s32(33)));
        const int32x4_t down = vsubq_s32(vdupq_n_s32(32), s); /* a right shift by s - 32 */
        for (long oy = oy0; oy < oy1; oy++) {
            const float *row = buf + (oy - oy0) * sy + c;
            for (long ox = 0; ox < OW; ox++) {
                const float *base = row + ox * sx;
                float32x4_t acc = vdupq_n_f32(0.0f);
                for (int t = 0; t < taps; t++) acc = vfmaq_f32(acc, vld1q_f32(base + off[t]), vld1q_f32(wf + (long)t * c8 + c));
                const int32x4_t v = vaddq_s32(vcvtq_s32_f32(acc), bias);
                int32x4_t y;
                if (wide) {
                    y = vaddq_s32(vshlq_s32(vaddq_s32(vmulhq_s32(v, m), rnd), down), zp);
                    y = vminq_s32(vmaxq_s32(y, lo), hi);
                } else {
                    int32_t lane[4];
                    vst1q_s32(lane, v);
                    for (int i = 0; i < n; i++)
                        lane[i] = be_rq1_32(lane[i], e->mult[c + i], e->shift[c + i], e->lim[c + i], e->zp, e->lo, e->hi);
                    y = vld1q_s32(lane);
                }
                const long p = oy * OW + ox;
                int8_t *d = out_nhwc ? yi + p * C + c : yi + c * ohw + p;
                vstrbq_scatter_offset_p_s32(d, scatter, y, keep);
            }
        }
    }
}
