/* int8 depthwise convolution with channels-last rows for Cortex-M cores with the DSP extension: the band copy and
 * driver of reference/qconv_dw_nhwc.c (qconv_dw_nhwc_loops.h) with the band in int16 instead of float, two
 * channels per 32-bit word, and the requantisation in 32-bit steps (rq32.h); results are the reference's bit for
 * bit (integer sums: the float kernel's are exact integers too).
 *
 * Why: a float band costs a conversion per input and per output and soft-float on cores without an FPU; int16
 * pairs take one load per tap for two channels.
 * dw_band, per pair of channels (c, c+1) of the band (C8 is even, so the pair exists; a padding channel has
 * zero weights and is not stored):
 *  1. the taps' weights of the two channels as int16 pairs (w_c, w_c1) in one word each;
 *  2. per output pixel, per tap, one word of the band is (x_c, x_c1) minus x_zp: SMLABB adds x_c * w_c to the
 *     first channel's sum, SMLATT x_c1 * w_c1 to the second's (|x| <= 255, |w| <= 128: exact; sums of at most
 *     512 taps fit int32); 3x3 kernels of dilation 1 read their taps as three rows of three words;
 *  3. + bias, be_rq1_32 with the pair's parameters (read once per pair), stored to NHWC or NCHW.
 */
#define DW_ELEM int16_t
#include "qconv.h"
#include "cm_dsp.h"
#include "rq32.h"
#include "qconv_dw_nhwc_loops.h"

/* the requantisation of one channel, read once per channel pair */
typedef struct {
    int32_t bias, m, s, lim;
} dw_rq;

static BE_AI dw_rq dw_rq_of(const be_qepi *e, long ch) {
    dw_rq q = {e->bias ? e->bias[ch] : 0, e->mult[ch], e->shift[ch], e->lim[ch]};
    return q;
}

static BE_AI int8_t dw_out(int32_t acc, const dw_rq *q, const be_qepi *e) {
    return be_rq1_32((int32_t)((uint32_t)acc + (uint32_t)q->bias), q->m, q->s, q->lim, e->zp, e->lo, e->hi);
}

static void dw_band(const int16_t *buf, long wp, long c8, const be_qconv_geo *g, const long *off, const float *wf,
                    const be_qepi *e, long oy0, long oy1, int out_nhwc, int8_t *yi) {
    const int taps = g->KH * g->KW, three = g->KH == 3 && g->KW == 3 && g->dh == 1 && g->dw == 1;
    const long ohw = (long)g->OH * g->OW, OW = g->OW, C = g->C;
    const long sy = (long)g->sh * wp * c8, sx = (long)g->sw * c8, rs = wp * c8;
    uint32_t wv[taps];
    for (long c = 0; c < C; c += 2) {
        for (int t = 0; t < taps; t++)
            wv[t] = ((uint32_t)(int32_t)wf[(long)t * c8 + c] & 0xFFFFu) | ((uint32_t)(int32_t)wf[(long)t * c8 + c + 1] << 16);
        const dw_rq q0 = dw_rq_of(e, c), q1 = dw_rq_of(e, c + 1 < C ? c + 1 : c);
        const int two = c + 1 < C;
        for (long oy = oy0; oy < oy1; oy++) {
            const int16_t *row = buf + (oy - oy0) * sy + c;
            for (long ox = 0; ox < OW; ox++) {
                const int16_t *base = row + ox * sx;
                int32_t a0 = 0, a1 = 0;
                if (three) {
                    for (int ky = 0; ky < 3; ky++) {
                        const int16_t *p = base + ky * rs;
                        const uint32_t x0 = be_cm_ld32(p), x1 = be_cm_ld32(p + c8), x2 = be_cm_ld32(p + 2 * c8);
                        a0 = __smlabb((int32_t)x0, (int32_t)wv[3 * ky], a0);
                        a1 = __smlatt((int32_t)x0, (int32_t)wv[3 * ky], a1);
                        a0 = __smlabb((int32_t)x1, (int32_t)wv[3 * ky + 1], a0);
                        a1 = __smlatt((int32_t)x1, (int32_t)wv[3 * ky + 1], a1);
                        a0 = __smlabb((int32_t)x2, (int32_t)wv[3 * ky + 2], a0);
                        a1 = __smlatt((int32_t)x2, (int32_t)wv[3 * ky + 2], a1);
                    }
                } else {
                    for (int t = 0; t < taps; t++) {
                        const uint32_t x = be_cm_ld32(base + off[t]);
                        a0 = __smlabb((int32_t)x, (int32_t)wv[t], a0);
                        a1 = __smlatt((int32_t)x, (int32_t)wv[t], a1);
                    }
                }
                const long p = oy * OW + ox;
                int8_t *d = out_nhwc ? yi + p * C + c : yi + c * ohw + p;
                d[0] = dw_out(a0, &q0, e);
                if (two) d[out_nhwc ? 1 : ohw] = dw_out(a1, &q1, e);
            }
        }
    }
}
