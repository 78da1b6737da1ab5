/* Internal to the x86 kernel set: channels-last depthwise on 16 channels at a time (BE_ISA_X86_AVX512F), for
 * conv_dw_nhwc.c after conv_dw_nhwc_common.h. The same loops as its 8-channel ones (chan8, rows3x3, band_direct's
 * interior) on zmm: a channel block of 16 is taken while it lies within the padded channel count (the padded band
 * and the weights hold zeros past C, so loads need no mask; stores and the epilogue's operands are masked to C);
 * what is left (at most 8 channels) goes through the 8-channel code. Taps in order for every pixel: the same sums. */
#ifndef BURNEDGE_X86_ZMM_DW_H
#define BURNEDGE_X86_ZMM_DW_H

#include "x86_zmm.h"

/* stores n <= 16 outputs of pixel p, channels c.., with the epilogue; act < 0: the generic be_epi16_store */
static inline __attribute__((always_inline)) void put16(float *out, __m512 v, const fast_epi *f, const be_epi *e,
                                                        long p, long c, int n, const int act) {
    if (act < 0) {
        be_epi16_store(out, v, e, p, c, n);
        return;
    }
    const __mmask16 m = be_mask16(n);
    if (f->bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, f->bias + c));
    if (f->res) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, f->res + p * f->C + c));
    _mm512_mask_storeu_ps(out, m, be_act16(v, act, f->p0, f->p1));
}

/* chan8 on 16 channels: blocks of BP pixels of the band (flattened over its rows), each tap meeting all of them */
static inline __attribute__((always_inline)) void chan16(const float *buf, long wp, long c8, const be_conv_geo *g,
                                                         const long *offs, int taps, const float *w, long c, int n,
                                                         float *out, long ldo, const fast_epi *f, const be_epi *e,
                                                         long p0, long p1, const int act, const int TAPS) {
    const int nt = TAPS > 0 ? TAPS : taps;
    __m512 wv[TAPS > 0 ? TAPS : 1];
    for (int t = 0; t < TAPS; t++) wv[t] = _mm512_loadu_ps(w + t * c8 + c);
    const long OW = g->OW, psx = (long)g->sw * c8, psy = (long)g->sh * wp * c8;
    long oy = 0, ox = 0;
    for (long p = p0; p < p1; p += BP) {
        const long np = p1 - p < BP ? p1 - p : BP, q = p - p0;
        const float *b[BP];
        long cy = oy, cx = ox;
        for (int j = 0; j < BP; j++) { /* past the end: repeat the last pixel (not stored) */
            b[j] = buf + cy * psy + cx * psx + c;
            if (j + 1 < np && ++cx == OW) cx = 0, cy++;
        }
        for (ox += BP; ox >= OW;) ox -= OW, oy++;
        __m512 acc[BP];
        for (int j = 0; j < BP; j++) acc[j] = _mm512_setzero_ps();
        for (int t = 0; t < nt; t++) {
            const __m512 wt = TAPS > 0 ? wv[t] : _mm512_loadu_ps(w + t * c8 + c);
            const long o = offs[t];
            for (int j = 0; j < BP; j++) acc[j] = _mm512_fmadd_ps(wt, _mm512_loadu_ps(b[j] + o), acc[j]);
        }
        for (int j = 0; j < BP; j++)
            if (j < np) put16(out + (q + j) * ldo + c, acc[j], f, e, p + j, c, n, act);
    }
}

/* four3x3 on 16 channels: four pixels of a 3x3 stride-1 row, each input column loaded once */
static inline __attribute__((always_inline)) void four3x3_16(const float *r, long rs, long cs, const __m512 *wv,
                                                             __m512 *o) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int ky = 0; ky < 3; ky++) {
        const float *q = r + ky * rs;
        const __m512 k0 = wv[ky * 3], k1 = wv[ky * 3 + 1], k2 = wv[ky * 3 + 2];
        __m512 x = _mm512_loadu_ps(q);
        a0 = _mm512_fmadd_ps(k0, x, a0);
        x = _mm512_loadu_ps(q + cs);
        a0 = _mm512_fmadd_ps(k1, x, a0);
        a1 = _mm512_fmadd_ps(k0, x, a1);
        x = _mm512_loadu_ps(q + 2 * cs);
        a0 = _mm512_fmadd_ps(k2, x, a0);
        a1 = _mm512_fmadd_ps(k1, x, a1);
        a2 = _mm512_fmadd_ps(k0, x, a2);
        x = _mm512_loadu_ps(q + 3 * cs);
        a1 = _mm512_fmadd_ps(k2, x, a1);
        a2 = _mm512_fmadd_ps(k1, x, a2);
        a3 = _mm512_fmadd_ps(k0, x, a3);
        x = _mm512_loadu_ps(q + 4 * cs);
        a2 = _mm512_fmadd_ps(k2, x, a2);
        a3 = _mm512_fmadd_ps(k1, x, a3);
        x = _mm512_loadu_ps(q + 5 * cs);
        a3 = _mm512_fmadd_ps(k2, x, a3);
    }
    o[0] = a0, o[1] = a1, o[2] = a2, o[3] = a3;
}

/* rows3x3 on 16 channels: 3x3 stride 1 without dilation, the 9 tap weights in registers */
static inline __attribute__((always_inline)) void rows3x3_16(const float *buf, long wp, long c8, const be_conv_geo *g,
                                                             const float *w, long c, int n, float *out, long ldo,
                                                             const fast_epi *f, const be_epi *e, long p0, long p1,
                                                             const int act) {
    __m512 wv[9];
    for (int t = 0; t < 9; t++) wv[t] = _mm512_loadu_ps(w + t * c8 + c);
    const long OW = g->OW, rs = wp * c8;
    for (long oy = 0; oy < (p1 - p0) / OW; oy++) {
        const float *r0 = buf + oy * rs + c;
        float *o = out + oy * OW * ldo + c;
        const long p = p0 + oy * OW;
        long ox = 0;
        for (; ox + 4 <= OW; ox += 4) {
            __m512 a[4];
            four3x3_16(r0 + ox * c8, rs, c8, wv, a);
            for (int j = 0; j < 4; j++) put16(o + (ox + j) * ldo, a[j], f, e, p + ox + j, c, n, act);
        }
        for (; ox < OW; ox++) {
            __m512 a0 = _mm512_setzero_ps();
            for (int t = 0; t < 9; t++)
                a0 = _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(r0 + (t / 3) * rs + (ox + t % 3) * c8), a0);
            put16(o + ox * ldo, a0, f, e, p + ox, c, n, act);
        }
    }
}

/* band_direct's pixels on 16 channels (C % 16 == 0 here... or the block c..c+15 inside C): one pixel at the
 * border, only its taps inside the image */
static inline __attribute__((always_inline)) __m512 pixel_border16(const float *x, const be_conv_geo *g,
                                                                   const float *w, long c, long oy, long ox) {
    const long C = g->C, iy0 = oy * g->sh - g->ph, ix0 = ox * g->sw - g->pw;
    __m512 acc = _mm512_setzero_ps();
    for (int ky = 0; ky < g->KH; ky++) {
        const long iy = iy0 + (long)ky * g->dh;
        if (iy < 0 || iy >= g->H) continue;
        for (int kx = 0; kx < g->KW; kx++) {
            const long ix = ix0 + (long)kx * g->dw, t = ky * g->KW + kx;
            if (ix < 0 || ix >= g->W) continue;
            acc = _mm512_fmadd_ps(_mm512_loadu_ps(w + t * C + c), _mm512_loadu_ps(x + (iy * g->W + ix) * C + c), acc);
        }
    }
    return acc;
}

/* band_direct for channels c..c+15 (all inside C): rows oy0.. of the output straight from the NHWC input */
static inline __attribute__((always_inline)) void direct16(const float *x, const be_conv_geo *g, const long *xo,
                                                           const float *w, float *out, long ldo, const fast_epi *f,
                                                           const be_epi *e, long oy0, long rows, long c, long lo,
                                                           long hi, const int act, const int TAPS, const int S1) {
    const long W = g->W, OW = g->OW, sx = (long)g->sw * g->C, p0 = oy0 * OW, reach_y = (long)(g->KH - 1) * g->dh;
    const int taps = g->KH * g->KW;
    __m512 wv[TAPS > 0 ? TAPS : 1];
    for (int t = 0; t < TAPS; t++) wv[t] = _mm512_loadu_ps(w + t * g->C + c);
    for (long oy = oy0; oy < oy0 + rows; oy++) {
        const long iy0 = oy * g->sh - g->ph, p = oy * OW;
        float *o = out + (p - p0) * ldo + c;
        const int inside = iy0 >= 0 && iy0 + reach_y < g->H;
        const long a = inside ? lo : OW, b = inside ? hi : OW;
        for (long ox = 0; ox < a; ox++)
            put16(o + ox * ldo, pixel_border16(x, g, w, c, oy, ox), f, e, p + ox, c, 16, act);
        const float *r = x + (iy0 * W + a * g->sw - g->pw) * g->C + c;
        long ox = a;
        if (S1) /* 3x3 stride 1: four pixels at a time, each input column loaded once (as rows3x3_16) */
            for (; ox + 4 <= b; ox += 4, r += 4 * sx) {
                __m512 acc[4];
                four3x3_16(r, W * g->C, g->C, wv, acc);
                for (int j = 0; j < 4; j++) put16(o + (ox + j) * ldo, acc[j], f, e, p + ox + j, c, 16, act);
            }
        for (; ox + BP <= b; ox += BP, r += BP * sx) {
            __m512 acc[BP];
            for (int j = 0; j < BP; j++) acc[j] = _mm512_setzero_ps();
            for (int t = 0; t < (TAPS > 0 ? TAPS : taps); t++) {
                const __m512 wt = TAPS > 0 ? wv[t] : _mm512_loadu_ps(w + t * g->C + c);
                for (int j = 0; j < BP; j++)
                    acc[j] = _mm512_fmadd_ps(wt, _mm512_loadu_ps(r + j * sx + xo[t]), acc[j]);
            }
            for (int j = 0; j < BP; j++) put16(o + (ox + j) * ldo, acc[j], f, e, p + ox + j, c, 16, act);
        }
        for (; ox < b; ox++, r += sx) {
            __m512 acc = _mm512_setzero_ps();
            for (int t = 0; t < (TAPS > 0 ? TAPS : taps); t++) {
                const __m512 wt = TAPS > 0 ? wv[t] : _mm512_loadu_ps(w + t * g->C + c);
                acc = _mm512_fmadd_ps(wt, _mm512_loadu_ps(r + xo[t]), acc);
            }
            put16(o + ox * ldo, acc, f, e, p + ox, c, 16, act);
        }
        for (ox = b > a ? b : a; ox < OW; ox++)
            put16(o + ox * ldo, pixel_border16(x, g, w, c, oy, ox), f, e, p + ox, c, 16, act);
    }
}

#endif
