/* int8 depthwise convolution with channels-last rows for Cortex-M cores with the DSP extension: the band copy and
 * driver of reference/qconv_dw_nhwc.c (qconv_dw_nhwc_loops.h) with the band in int16 instead of float, two
 * channels per 32-bit word, and the requantisation in 32-bit steps (rq32.h); results are the reference's bit for
 * bit (integer sums: the float kernel's are exact integers too).
 *
 * Why: a float band costs a conversion per input and per output and soft-float on cores without an FPU; int16
 * pairs take one load per tap for two channels, and the band's rows are made 4 values per SXTB16 pair.
 * dw_band, per pair of channels (c, c+1) of the band (C8 is even, so the pair exists; a padding channel has
 * zero weights and is not stored):
 *  1. the taps' weights of the two channels as int16 pairs (w_c, w_c1) in one word each;
 *  2. per output pixel, per tap, one word of the band is (x_c, x_c1) minus x_zp: SMLABB adds x_c * w_c to the
 *     first channel's sum, SMLATT x_c1 * w_c1 to the second's (|x| <= 255, |w| <= 128: exact; sums of at most
 *     512 taps fit int32); 3x3 kernels of dilation 1 keep their 9 weight pairs at hand and, at stride 1, take
 *     two pixels of a row at a time (4 words of each input row for the 6 taps of both);
 *  3. + bias, be_rq1_32 with the pair's parameters (read once per pair), stored to NHWC or NCHW.
 */
#define DW_ELEM int16_t
#include "qconv.h"
#include "cm_dsp.h"
#include "rq32.h"

/* the band's rows of whole 8-channel pixels: 4 int8 minus x_zp into two int16 pairs per step (n is a multiple
 * of 8) */
static BE_AI void dw_convert(int16_t *d, const int8_t *s, long n, int32_t x_zp) {
    const int16x2_t zz = (int16x2_t)(((uint32_t)x_zp & 0xFFFFu) * 0x10001u);
    for (long i = 0; i < n; i += 4) {
        uint32_t lo, hi;
        be_cm_pairs(be_cm_ld32(s + i), &lo, &hi);
        lo = (uint32_t)__ssub16((int16x2_t)lo, zz), hi = (uint32_t)__ssub16((int16x2_t)hi, zz);
        memcpy(d + i, &lo, 4), memcpy(d + i + 2, &hi, 4);
    }
}
#define DW_CONVERT(d, s, n, x_zp) dw_convert(d, s, n, x_zp)
#include "qconv_dw_nhwc_loops.h"

/* the requantisation of one channel, read once per channel pair (locals: int8 stores may alias the epilogue) */
typedef struct {
    int32_t bias, m, s, lim, zp, lo, hi;
} dw_rq;

static BE_AI dw_rq dw_rq_of(const be_qepi *e, long ch) {
    dw_rq q = {e->bias ? e->bias[ch] : 0, e->mult[ch], e->shift[ch], e->lim[ch], e->zp, e->lo, e->hi};
    return q;
}

static BE_AI int8_t dw_out(int32_t acc, const dw_rq *q) {
    return be_rq1_32((int32_t)((uint32_t)acc + (uint32_t)q->bias), q->m, q->s, q->lim, q->zp, q->lo, q->hi);
}

/* the weights of tap t of channels c, c+1 as an int16 pair (the floats are exact integers) */
static BE_AI uint32_t dw_w(const float *wf, int t, long c8, long c) {
    return ((uint32_t)(int32_t)wf[(long)t * c8 + c] & 0xFFFFu) | ((uint32_t)(int32_t)wf[(long)t * c8 + c + 1] << 16);
}

/* += one tap of a channel pair: x = (x_c, x_c1) of the band, w = (w_c, w_c1) */
#define DW_TAP(x, w, a0, a1) (a0 = __smlabb((int32_t)(x), (int32_t)(w), a0), a1 = __smlatt((int32_t)(x), (int32_t)(w), a1))

static void dw_band(const int16_t *buf, long wp, long c8, const be_qconv_geo *g, const long *off, const float *wf,
                    const be_qepi *e, long oy0, long oy1, int out_nhwc, int8_t *yi) {
    const int taps = g->KH * g->KW, three = g->KH == 3 && g->KW == 3 && g->dh == 1 && g->dw == 1;
    const long ohw = (long)g->OH * g->OW, OW = g->OW, C = g->C;
    const long sy = (long)g->sh * wp * c8, sx = (long)g->sw * c8, rs = wp * c8;
    const long next = out_nhwc ? 1 : ohw, step = out_nhwc ? C : 1; /* the pair's second channel; the next pixel */
    uint32_t wv[9]; /* a 3x3 kernel's weights of the pair; other kernels convert them per tap */
    for (long c = 0; c < C; c += 2) {
        for (int t = 0; three && t < 9; t++) wv[t] = dw_w(wf, t, c8, c);
        const dw_rq q0 = dw_rq_of(e, c), q1 = dw_rq_of(e, c + 1 < C ? c + 1 : c);
        const int two = c + 1 < C;
        for (long oy = oy0; oy < oy1; oy++) {
            const int16_t *row = buf + (oy - oy0) * sy + c;
            int8_t *d = out_nhwc ? yi + oy * OW * C + c : yi + c * ohw + oy * OW;
            long ox = 0;
            if (three && sx == c8) /* stride 1: two pixels at a time, 4 words of a row for their 6 taps */
                for (; ox + 2 <= OW; ox += 2, d += 2 * step) {
                    const int16_t *p = row + ox * sx;
                    int32_t a0 = 0, a1 = 0, b0 = 0, b1 = 0;
                    for (int ky = 0; ky < 3; ky++, p += rs) {
                        const uint32_t *w = wv + 3 * ky, x1 = be_cm_ld32(p + c8), x2 = be_cm_ld32(p + 2 * c8);
                        DW_TAP(be_cm_ld32(p), w[0], a0, a1);
                        DW_TAP(x1, w[1], a0, a1);
                        DW_TAP(x2, w[2], a0, a1);
                        DW_TAP(x1, w[0], b0, b1);
                        DW_TAP(x2, w[1], b0, b1);
                        DW_TAP(be_cm_ld32(p + 3 * c8), w[2], b0, b1);
                    }
                    d[0] = dw_out(a0, &q0);
                    d[step] = dw_out(b0, &q0);
                    if (two) d[next] = dw_out(a1, &q1), d[step + next] = dw_out(b1, &q1);
                }
            for (; ox < OW; ox++, d += step) {
                const int16_t *base = row + ox * sx;
                int32_t a0 = 0, a1 = 0;
                if (three)
                    for (int t = 0; t < 9; t++) DW_TAP(be_cm_ld32(base + off[t]), wv[t], a0, a1);
                else
                    for (int t = 0; t < taps; t++) DW_TAP(be_cm_ld32(base + off[t]), dw_w(wf, t, c8, c), a0, a1);
                d[0] = dw_out(a0, &q0);
                if (two) d[next] = dw_out(a1, &q1);
            }
        }
    }
}
