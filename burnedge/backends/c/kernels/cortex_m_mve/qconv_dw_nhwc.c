/* int8 depthwise convolution with channels-last rows for Cortex-M cores with Helium and its float lanes (M55):
 * the float band and driver of reference/qconv_dw_nhwc.c (qconv_dw_nhwc_loops.h), 4 channels per q register,
 * and the requantisation in q registers; results are the reference's bit for bit.
 *
 * dw_band, per group of 4 channels (C8 is a multiple of 8; channels past C have zero weights and are not stored):
 *  1. per output pixel and tap, VFMA adds the band's 4 values times the tap's 4 weights: the products and sums
 *     are integers below 2^24 (qconv.h), so float arithmetic is exact, as in the reference;
 *  2. the 4 sums become int32 (exact) + bias, then the rule of qgemm.h in 32-bit lanes when every channel of the
 *     group has s >= 33 (be_mve_rq_wide, cm_mve.h: VMULH and a rounding shift), else be_rq1_32 per channel;
 *     4 int8 stored by a predicated narrowing store (NHWC) or one by one, ohw apart (NCHW).
 */
#include "qconv.h"
#include "cm_mve.h"
#include "rq32.h"

/* the band's rows of whole 8-channel pixels: 4 int8 widened, minus x_zp, to float per step (tail predicated) */
static BE_AI void dw_convert(float *d, const int8_t *s, long n, int32_t x_zp) {
    for (long i = 0; i < n; i += 4) {
        const mve_pred16_t p = vctp32q((uint32_t)(n - i));
        vstrwq_p_f32(d + i, vcvtq_f32_s32(vsubq_n_s32(vldrbq_z_s32(s + i, p), x_zp)), p);
    }
}
#define DW_CONVERT(d, s, n, x_zp) dw_convert(d, s, n, x_zp)
#include "qconv_dw_nhwc_loops.h"

#ifndef BE_ISA_MVE_FLOAT
#error "the Helium depthwise kernel needs MVE's float lanes (an M55 with its FPU): build the reference set alone"
#endif

static void dw_band(const float *buf, long wp, long c8, const be_qconv_geo *g, const long *off, const float *wf,
                    const be_qepi *e, long oy0, long oy1, int out_nhwc, int8_t *yi) {
    const int taps = g->KH * g->KW, three = taps == 9 && g->KH == 3 && g->dh == 1 && g->dw == 1;
    const long ohw = (long)g->OH * g->OW, OW = g->OW, C = g->C;
    const long sy = (long)g->sh * wp * c8, sx = (long)g->sw * c8, rs = wp * c8;
    const int32_t zp = e->zp;
    const int32x4_t lo = vdupq_n_s32(e->lo), hi = vdupq_n_s32(e->hi);
    for (long c = 0; c < C; c += 4) {
        const int n = (int)(C - c < 4 ? C - c : 4);
        const mve_pred16_t keep = vctp32q((uint32_t)n);
        const int32x4_t bias = e->bias ? vld1q_s32(e->bias + c) : vdupq_n_s32(0); /* channel arrays: padded to 16 */
        const int32x4_t m = vld1q_s32(e->mult + c), s = vld1q_s32(e->shift + c);
        const int wide = be_mve_all_wide(s, n);
        const int32x4_t down = vsubq_s32(vdupq_n_s32(32), s);
        const float *w = wf + c;
        for (long oy = oy0; oy < oy1; oy++) {
            const float *row = buf + (oy - oy0) * sy + c;
            for (long ox = 0; ox < OW; ox++) {
                const float *base = row + ox * sx;
                float32x4_t acc = vdupq_n_f32(0.0f);
                if (three) /* 3x3, dilation 1: three rows of three taps, addresses from two strides */
                    for (int ky = 0; ky < 3; ky++) {
                        const float *x = base + ky * rs, *wk = w + 3 * ky * c8;
                        acc = vfmaq_f32(acc, vld1q_f32(x), vld1q_f32(wk));
                        acc = vfmaq_f32(acc, vld1q_f32(x + c8), vld1q_f32(wk + c8));
                        acc = vfmaq_f32(acc, vld1q_f32(x + 2 * c8), vld1q_f32(wk + 2 * c8));
                    }
                else
                    for (int t = 0; t < taps; t++) acc = vfmaq_f32(acc, vld1q_f32(base + off[t]), vld1q_f32(w + (long)t * c8));
                const int32x4_t v = vaddq_s32(vcvtq_s32_f32(acc), bias);
                int32_t lane[4];
                if (wide) {
                    vst1q_s32(lane, be_mve_rq_wide(v, m, down, zp, lo, hi));
                } else {
                    vst1q_s32(lane, v);
                    for (int i = 0; i < n; i++)
                        lane[i] = be_rq1_32(lane[i], e->mult[c + i], e->shift[c + i], e->lim[c + i], zp, e->lo, e->hi);
                }
                const long p = oy * OW + ox;
                if (out_nhwc) {
                    vstrbq_p_s32(yi + p * C + c, vld1q_s32(lane), keep);
                } else {
                    for (int i = 0; i < n; i++) yi[(c + i) * ohw + p] = (int8_t)lane[i];
                }
            }
        }
    }
}
