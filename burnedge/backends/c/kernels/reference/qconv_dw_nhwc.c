/* int8 depthwise convolution with channels-last (NHWC) rows, vectorised along channels (be_qdwconv_nhwc_i8,
 * multiplier 1), reading an NCHW or NHWC input and writing an NCHW or NHWC output (flags: 1 = input NHWC,
 * 2 = output NHWC); the implicit GEMM of other convs is qconv_nhwc.c.
 *
 * Why: on the small planes of edge CNNs (25x5, 12x12, 6x6) a per-plane depthwise kernel wastes most of its 8-wide
 * runs; with rows = output pixels and columns = channels, vectors run along channels.
 *
 * Per band of output rows (one band per thread and image):
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

static int qthreads(int threads, double work, long jobs) {
    int nt = threads < BE_Q_MAX_THREADS ? threads : BE_Q_MAX_THREADS;
    if (work < 200000.0) nt = 1;
    if (nt > jobs) nt = (int)(jobs > 0 ? jobs : 1);
    return nt < 1 ? 1 : nt;
}

/* -- depthwise ----------------------------------------------------------------------------------------------- */
#define DP 4 /* output pixels per block */

/* padded input rows iy0 .. iy0+rin-1 (padded coordinates) of image xi as floats minus x_zp, [row][wp][c8] */
static void dw_fill(const int8_t *xi, int in_nhwc, const be_qconv_geo *g, long c8, long wp, long r0, long rin,
                    int32_t x_zp, float *buf) {
    const long C = g->C, hw = (long)g->H * g->W;
    for (long r = 0; r < rin; r++) {
        float *d = buf + r * wp * c8;
        const long iy = r0 + r - g->ph;
        if (iy < 0 || iy >= g->H) {
            memset(d, 0, (size_t)(wp * c8) * sizeof(float));
            continue;
        }
        const long lpad = g->pw < wp ? g->pw : wp;
        if (lpad > 0) memset(d, 0, (size_t)(lpad * c8) * sizeof(float));
        const long right = wp - g->pw - g->W;
        if (right > 0) memset(d + (g->pw + g->W) * c8, 0, (size_t)(right * c8) * sizeof(float));
        const long wn = g->W < wp - g->pw ? g->W : wp - g->pw;
        if (in_nhwc && C == c8) { /* whole 8-channel pixels: the row is one run */
            const int8_t *s = xi + iy * g->W * C;
            float *dp = d + g->pw * c8;
            for (long i = 0; i < wn * C; i++) dp[i] = (float)(s[i] - x_zp);
        } else if (in_nhwc) {
            const int8_t *s = xi + iy * g->W * C;
            for (long ix = 0; ix < wn; ix++) {
                float *dp = d + (g->pw + ix) * c8;
                const int8_t *sp = s + ix * C;
                for (long c = 0; c < C; c++) dp[c] = (float)(sp[c] - x_zp);
                for (long c = C; c < c8; c++) dp[c] = 0.0f;
            }
        } else {
            for (long c = 0; c < C; c++) {
                const int8_t *s = xi + c * hw + iy * g->W;
                float *dp = d + g->pw * c8 + c;
                for (long ix = 0; ix < wn; ix++) dp[ix * c8] = (float)(s[ix] - x_zp);
            }
            if (c8 > C)
                for (long ix = 0; ix < wn; ix++)
                    for (long c = C; c < c8; c++) d[(g->pw + ix) * c8 + c] = 0.0f;
        }
    }
}

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

void be_qdwconv_nhwc_i8(const int8_t *x, const float *wf, int8_t *y, const be_qepi *e, const be_qconv_geo *g,
                        int flags, int32_t x_zp, float *scratch, int threads) {
    const long C = g->C, c8 = (C + 7) / 8 * 8, hw = (long)g->H * g->W, ohw = (long)g->OH * g->OW;
    const long wp = be_qdw_nhwc_wp(g);
    const int taps = g->KH * g->KW;
    int nt = threads < BE_Q_MAX_THREADS ? threads : BE_Q_MAX_THREADS;
    if ((double)g->N * ohw * C * taps < 100000.0) nt = 1;
    if (nt > g->OH * g->N) nt = g->OH * g->N;
    if (nt < 1) nt = 1;
    const long bands = g->N >= nt ? 1 : (nt + g->N - 1) / g->N, jobs = (long)g->N * bands;
    const long brows = (g->OH + bands - 1) / bands;
    long off[512];
    for (int ky = 0; ky < g->KH; ky++)
        for (int kx = 0; kx < g->KW; kx++)
            off[ky * g->KW + kx] = ((long)ky * g->dh * wp + (long)kx * g->dw) * c8;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int t = 0; t < nt; t++) {
        float *buf = scratch + (long)t * be_qdw_nhwc_slice(g, brows);
        for (long job = t; job < jobs; job += nt) {
            const long n = job / bands, b = job % bands;
            const long oy0 = b * brows, oy1 = oy0 + brows < g->OH ? oy0 + brows : g->OH;
            if (oy0 >= oy1) continue;
            const long rin = (oy1 - oy0 - 1) * g->sh + (long)(g->KH - 1) * g->dh + 1;
            const int8_t *xi = x + n * C * hw;
            dw_fill(xi, flags & 1, g, c8, wp, oy0 * g->sh, rin, x_zp, buf);
            dw_band(buf, wp, c8, g, off, wf, e, oy0, oy1, (flags & 2) != 0, y + n * C * ohw);
        }
    }
}
