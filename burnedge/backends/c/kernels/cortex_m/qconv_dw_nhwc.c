/* int8 depthwise convolution with channels-last rows for Cortex-M cores without an FPU (M3): the band copy and
 * driver of reference/qconv_dw_nhwc.c (qconv_dw_nhwc_loops.h) with the band in int16 instead of float and integer
 * multiply-adds, the requantisation in 32-bit steps (rq32.h); results are the reference's bit for bit.
 *
 * Why: the reference's float band and taps become library calls per operation on a core without an FPU (soft
 * float); in integers the same sums are exact and cost a multiply-add each. Portable C (no ISA): the set for cores
 * that have no DSP extension either; the DSP and Helium sets have their own.
 * dw_band, per channel c of the band:
 *  1. the taps' weights as integers, read from their float bits (exact integers of magnitude <= 128: no FPU);
 *  2. per output pixel, the taps' band values (minus x_zp, int16) times the weights, summed in int32 (|x| <= 255,
 *     |w| <= 128, at most 512 taps: exact);
 *  3. + bias, be_rq1_32, stored to NHWC or NCHW.
 */
#define DW_ELEM int16_t
#include "qconv.h"
#include "rq32.h"
#include "qconv_dw_nhwc_loops.h"

/* an integer-valued float (|v| < 2^23) as an int, from its bits */
static inline int32_t int_of_float(float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    const int32_t e = (int32_t)((u >> 23) & 0xFFu) - 127;
    const int32_t mag = e < 0 ? 0 : (int32_t)(((u & 0x7FFFFFu) | 0x800000u) >> (23 - e));
    return (u >> 31) ? -mag : mag;
}

static void dw_band(const int16_t *buf, long wp, long c8, const be_qconv_geo *g, const long *off, const float *wf,
                    const be_qepi *e, long oy0, long oy1, int out_nhwc, int8_t *yi) {
    const int taps = g->KH * g->KW;
    const long ohw = (long)g->OH * g->OW, OW = g->OW, C = g->C, sy = (long)g->sh * wp * c8, sx = (long)g->sw * c8;
    const int32_t zp = e->zp, lo = e->lo, hi = e->hi; /* locals: int8 stores may alias the epilogue */
    const long step = out_nhwc ? C : 1;
    int16_t wv[taps]; /* sized to the kernel: a microcontroller's stack is small */
    for (long c = 0; c < C; c++) {
        for (int t = 0; t < taps; t++) wv[t] = (int16_t)int_of_float(wf[(long)t * c8 + c]);
        const uint32_t bias = e->bias ? (uint32_t)e->bias[c] : 0u;
        const int32_t m = e->mult[c], s = e->shift[c], lim = e->lim[c];
        for (long oy = oy0; oy < oy1; oy++) {
            const int16_t *row = buf + (oy - oy0) * sy + c;
            int8_t *d = out_nhwc ? yi + oy * OW * C + c : yi + c * ohw + oy * OW;
            for (long ox = 0; ox < OW; ox++, d += step) {
                const int16_t *base = row + ox * sx;
                int32_t acc = 0;
                for (int t = 0; t < taps; t++) acc += (int32_t)base[off[t]] * wv[t];
                *d = be_rq1_32((int32_t)((uint32_t)acc + bias), m, s, lim, zp, lo, hi);
            }
        }
    }
}
