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
#include "qconv_dw_nhwc_loops.h"

/* the requantisation constants of 8 channels cb .. cb+7 (per-channel arrays are padded to 16) */
typedef struct {
    const be_qepi *e;
    long cb;
} dwq;

static inline __attribute__((always_inline)) dwq dwq_make(const be_qepi *e, long cb) {
    dwq d;
    d.e = e;
    d.cb = cb;
    return d;
}

/* requantise 8 channels of one pixel (integer-valued floats) and store n of them, dstride apart */
static inline __attribute__((always_inline)) void dw_out8(const float *acc, const dwq *d, int n, int8_t *dst,
                                                          long dstride) {
    int8_t out[8];
    const be_qepi *e = d->e;
    for (int i = 0; i < n; i++) {
        const long ch = d->cb + i;
        const uint32_t v = (uint32_t)(int32_t)acc[i] + (e->bias ? (uint32_t)e->bias[ch] : 0u);
        out[i] = be_rq1((int32_t)v, e->mult[ch], e->shift[ch], e->lim[ch], e->zp, e->lo, e->hi);
    }
    for (int i = 0; i < n; i++) dst[i * dstride] = out[i];
}

/* output rows oy0 .. oy1-1 of one image from its filled band (padded row oy0*sh at buf row 0) */
static void dw_band(const float *buf, long wp, long c8, const be_qconv_geo *g, const long *off, const float *wf,
                    const be_qepi *e, long oy0, long oy1, int out_nhwc, int8_t *yi) {
    const int taps = g->KH * g->KW;
    const long ohw = (long)g->OH * g->OW, npix = (oy1 - oy0) * g->OW, C = g->C;
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
            for (int t = 0; t < taps; t++) {
                const float *w = wf + (long)t * c8 + cb;
                for (int i = 0; i < DP; i++) {
                    const float *src = base[i] + off[t];
                    for (int l = 0; l < 8; l++) acc[i][l] += src[l] * w[l];
                }
            }
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
