/* Channels-last (NHWC) depthwise convolution, multiplier 1: vectorised over channels, any kernel, stride,
 * dilation and padding.
 *
 * Why: the width-vectorised NCHW kernel (conv_dw.c) wastes most of its 8-wide slots on small planes (25x5, 7x7)
 * and pays a padded plane copy per channel; in NHWC the C channels of a pixel are contiguous, so every vector is
 * full whatever the plane size.
 *
 * Algorithm, per image, in bands of output rows (a job is one band; bands are spread over threads):
 *  1. the input rows the band reads are copied into the thread's scratch as a zero-padded NHWC block
 *     (Wp = W + both pads columns; rows outside the image and pad columns are zeros), from an NHWC or an NCHW
 *     input alike; every tap of every output pixel then sits at a fixed offset from the pixel's base, so the
 *     inner loops have no bounds checks;
 *  2. channels go 8 at a time (a masked store for the last C % 8); 3x3 stride-1 kernels keep the 9 tap weights
 *     in registers and take 4 pixels of a row at a time, each input column loaded once for the 3 pixels that read
 *     it; other kernels take blocks of BP = 4 output pixels of the band (flattened over its rows), each tap's
 *     weights (in registers for 9 taps) meeting the 4 pixels; taps in order for every pixel;
 *  3. the epilogue (bias, NHWC residual, activation) is applied in registers with the common activations
 *     resolved at compile time (other epilogues go through be_epi8_store); with an NCHW output the block is
 *     stored transposed.
 * x86, NHWC input with C % 8 == 0, strided convs on large planes and 3x3 stride-1 ones whose band would be at
 * most 2 output rows: no band copy at all, the input read in place (band_direct in x86/conv_dw_nhwc.c).
 * AVX-512 (BE_ISA_X86_AVX512F): the same loops 16 channels at a time (x86_zmm_dw.h), the last <= 8 on ymm.
 * Every output is the same sum in the same order whatever the thread count and band split. NEON: the same loops
 * on 4-float vectors, 8 channels at a time on aarch64 and 4 on armv7 (16 q registers).
 */
#include "conv.h"
#include "x86_dense.h"

#include "conv_dw_nhwc_common.h"
#ifdef BE_ISA_X86_AVX512F
#include "x86_zmm_dw.h" /* chan16, rows3x3_16, direct16: 16 channels at a time on zmm */
#define DW_ZMM 1
#else
#define DW_ZMM 0
#endif

/* stores n <= 8 outputs of pixel p, channels c.., with the epilogue; act < 0: the generic be_epi8_store */
static inline __attribute__((always_inline)) void put8(float *out, __m256 v, const fast_epi *f, const be_epi *e,
                                                       long p, long c, int n, const int act) {
    if (act < 0) {
        be_epi8_store(out, v, e, p, c, n);
        return;
    }
    if (n == 8) {
        if (f->bias) v = _mm256_add_ps(v, _mm256_loadu_ps(f->bias + c));
        if (f->res) v = _mm256_add_ps(v, _mm256_loadu_ps(f->res + p * f->C + c));
        _mm256_storeu_ps(out, be_act8(v, act, f->p0, f->p1));
        return;
    }
    const __m256i m = be_mask8(n);
    if (f->bias) v = _mm256_add_ps(v, _mm256_maskload_ps(f->bias + c, m));
    if (f->res) v = _mm256_add_ps(v, _mm256_maskload_ps(f->res + p * f->C + c, m));
    _mm256_maskstore_ps(out, m, be_act8(v, act, f->p0, f->p1));
}

/* outputs of pixels p0 .. p1-1 (flattened over the band's rows, p0 = the band's first pixel), channels c..c+7
 * (n < 8: only n stored; the padded block and the weights hold zeros past C, so loads need no mask); TAPS > 0: a
 * compile-time tap count, the tap weights stay in registers */
static inline __attribute__((always_inline)) void chan8(const float *buf, long wp, long c8, const be_conv_geo *g,
                                                        const long *offs, int taps, const float *w, long c, int n,
                                                        float *out, long ldo, const fast_epi *f, const be_epi *e,
                                                        long p0, long p1, const int act, const int TAPS) {
    const int nt = TAPS > 0 ? TAPS : taps;
    __m256 wv[TAPS > 0 ? TAPS : 1];
    for (int t = 0; t < TAPS; t++) wv[t] = _mm256_loadu_ps(w + t * c8 + c);
    const long OW = g->OW, psx = (long)g->sw * c8, psy = (long)g->sh * wp * c8;
    long oy = 0, ox = 0; /* of pixel p, relative to the band */
    for (long p = p0; p < p1; p += BP) {
        const long np = p1 - p < BP ? p1 - p : BP, q = p - p0;
        const float *b[BP];
        long cy = oy, cx = ox;
        for (int j = 0; j < BP; j++) { /* past the end: repeat the last pixel (not stored) */
            b[j] = buf + cy * psy + cx * psx + c;
            if (j + 1 < np && ++cx == OW) cx = 0, cy++;
        }
        for (ox += BP; ox >= OW;) ox -= OW, oy++;
        __m256 acc[BP];
        for (int j = 0; j < BP; j++) acc[j] = _mm256_setzero_ps();
        for (int t = 0; t < nt; t++) {
            const __m256 wt = TAPS > 0 ? wv[t] : _mm256_loadu_ps(w + t * c8 + c);
            const long o = offs[t];
            for (int j = 0; j < BP; j++) acc[j] = _mm256_fmadd_ps(wt, _mm256_loadu_ps(b[j] + o), acc[j]);
        }
        for (int j = 0; j < BP; j++)
            if (j < np) put8(out + (q + j) * ldo + c, acc[j], f, e, p + j, c, n, act);
    }
}

/* four output pixels of a 3x3 stride-1 row: the input rows start at r, r + rs, r + 2*rs, consecutive pixels `cs`
 * floats apart; each input column is loaded once and meets the (up to 3) pixels that read it; taps in order */
static inline __attribute__((always_inline)) void four3x3(const float *r, long rs, long cs, const __m256 *wv,
                                                          __m256 *o0, __m256 *o1, __m256 *o2, __m256 *o3) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int ky = 0; ky < 3; ky++) {
        const float *q = r + ky * rs;
        const __m256 k0 = wv[ky * 3], k1 = wv[ky * 3 + 1], k2 = wv[ky * 3 + 2];
        __m256 x = _mm256_loadu_ps(q);
        a0 = _mm256_fmadd_ps(k0, x, a0);
        x = _mm256_loadu_ps(q + cs);
        a0 = _mm256_fmadd_ps(k1, x, a0);
        a1 = _mm256_fmadd_ps(k0, x, a1);
        x = _mm256_loadu_ps(q + 2 * cs);
        a0 = _mm256_fmadd_ps(k2, x, a0);
        a1 = _mm256_fmadd_ps(k1, x, a1);
        a2 = _mm256_fmadd_ps(k0, x, a2);
        x = _mm256_loadu_ps(q + 3 * cs);
        a1 = _mm256_fmadd_ps(k2, x, a1);
        a2 = _mm256_fmadd_ps(k1, x, a2);
        a3 = _mm256_fmadd_ps(k0, x, a3);
        x = _mm256_loadu_ps(q + 4 * cs);
        a2 = _mm256_fmadd_ps(k2, x, a2);
        a3 = _mm256_fmadd_ps(k1, x, a3);
        x = _mm256_loadu_ps(q + 5 * cs);
        a3 = _mm256_fmadd_ps(k2, x, a3);
    }
    *o0 = a0, *o1 = a1, *o2 = a2, *o3 = a3;
}

/* 3x3, stride 1, no dilation: channels c..c+7 of the band's rows, 4 pixels of a row at a time with the 9 tap
 * weights in registers; each input column of a kernel row is loaded once and meets the (up to 3) pixels that read
 * it; the pixels left over go one by one. Taps in order for every pixel (the same sums as chan8). */
static inline __attribute__((always_inline)) void rows3x3(const float *buf, long wp, long c8, const be_conv_geo *g,
                                                          const float *w, long c, int n, float *out, long ldo,
                                                          const fast_epi *f, const be_epi *e, long p0, long p1,
                                                          const int act) {
    __m256 wv[9];
    for (int t = 0; t < 9; t++) wv[t] = _mm256_loadu_ps(w + t * c8 + c);
    const long OW = g->OW, rs = wp * c8;
    for (long oy = 0; oy < (p1 - p0) / OW; oy++) {
        const float *r0 = buf + oy * rs + c;
        float *o = out + oy * OW * ldo + c;
        const long p = p0 + oy * OW;
        long ox = 0;
        for (; ox + 4 <= OW; ox += 4) {
            __m256 a0, a1, a2, a3;
            four3x3(r0 + ox * c8, rs, c8, wv, &a0, &a1, &a2, &a3);
            put8(o + ox * ldo, a0, f, e, p + ox, c, n, act);
            put8(o + (ox + 1) * ldo, a1, f, e, p + ox + 1, c, n, act);
            put8(o + (ox + 2) * ldo, a2, f, e, p + ox + 2, c, n, act);
            put8(o + (ox + 3) * ldo, a3, f, e, p + ox + 3, c, n, act);
        }
        for (; ox < OW; ox++) {
            __m256 a0 = _mm256_setzero_ps();
            for (int t = 0; t < 9; t++)
                a0 = _mm256_fmadd_ps(wv[t], _mm256_loadu_ps(r0 + (t / 3) * rs + (ox + t % 3) * c8), a0);
            put8(o + ox * ldo, a0, f, e, p + ox, c, n, act);
        }
    }
}
static inline __attribute__((always_inline)) void band_avx2(const float *buf, long wp, long c8, const be_conv_geo *g,
                                                            const long *offs, const float *w, float *out, long ldo,
                                                            const fast_epi *f, const be_epi *e, long p0, long p1,
                                                            const int act) {
    const int taps = g->KH * g->KW, C = g->C;
    const int k3s1 = dw_k3s1(g);
    long c = 0;
#if DW_ZMM
    for (; c + 16 <= c8; c += 16) { /* 16 channels while they lie in the padded count, then the 8-channel code */
        const int n = C - c < 16 ? (int)(C - c) : 16;
        if (k3s1 && g->OW >= 4)
            rows3x3_16(buf, wp, c8, g, w, c, n, out, ldo, f, e, p0, p1, act);
        else if (taps == 9)
            chan16(buf, wp, c8, g, offs, taps, w, c, n, out, ldo, f, e, p0, p1, act, 9);
        else
            chan16(buf, wp, c8, g, offs, taps, w, c, n, out, ldo, f, e, p0, p1, act, 0);
    }
#endif
    for (; c < C; c += 8) {
        const int n = C - c < 8 ? (int)(C - c) : 8;
        if (k3s1 && g->OW >= 4)
            rows3x3(buf, wp, c8, g, w, c, n, out, ldo, f, e, p0, p1, act);
        else if (taps == 9)
            chan8(buf, wp, c8, g, offs, taps, w, c, n, out, ldo, f, e, p0, p1, act, 9);
        else
            chan8(buf, wp, c8, g, offs, taps, w, c, n, out, ldo, f, e, p0, p1, act, 0);
    }
}

/* ---- reading an NHWC input in place (x86, strided convs): no padded band copy ---------------------------------
 * With C % 8 == 0 the pixels of the input are rows of whole 8-channel vectors, so a pixel whose every tap lies in
 * the image reads the input itself (row stride W*C, column stride C): the interior columns [lo, hi) of a row whose
 * taps all lie in the image go BP at a time, the border pixels tap by tap, skipping the taps outside the image (a
 * padded tap adds w*0 = 0). Taps in order everywhere. */

/* one pixel at the border: only its taps inside the image */
static inline __attribute__((always_inline)) __m256 pixel_border(const float *x, const be_conv_geo *g,
                                                                 const float *w, long c, long oy, long ox) {
    const long C = g->C, iy0 = oy * g->sh - g->ph, ix0 = ox * g->sw - g->pw;
    __m256 acc = _mm256_setzero_ps();
    for (int ky = 0; ky < g->KH; ky++) {
        const long iy = iy0 + (long)ky * g->dh;
        if (iy < 0 || iy >= g->H) continue;
        for (int kx = 0; kx < g->KW; kx++) {
            const long ix = ix0 + (long)kx * g->dw, t = ky * g->KW + kx;
            if (ix < 0 || ix >= g->W) continue;
            /* the weight from memory, not wv[t]: a runtime index would keep wv out of registers everywhere */
            acc = _mm256_fmadd_ps(_mm256_loadu_ps(w + t * C + c), _mm256_loadu_ps(x + (iy * g->W + ix) * C + c), acc);
        }
    }
    return acc;
}

/* output rows oy0 .. oy0+rows-1 (pixel p0 = oy0*OW is out[0]), every channel block, straight from the input */
static inline __attribute__((always_inline)) void band_direct(const float *x, const be_conv_geo *g, const long *xo,
                                                              const float *w, float *out, long ldo,
                                                              const fast_epi *f, const be_epi *e, long oy0, long rows,
                                                              const int act, const int TAPS, const int S1) {
    const long C = g->C, W = g->W, OW = g->OW, sx = (long)g->sw * C, p0 = oy0 * OW;
    const long reach_x = (long)(g->KW - 1) * g->dw, reach_y = (long)(g->KH - 1) * g->dh;
    const long last = W - 1 - reach_x + g->pw; /* the last padded column a window may start at */
    long lo = (g->pw + g->sw - 1) / g->sw, hi = last >= 0 ? last / g->sw + 1 : 0;
    if (hi > OW) hi = OW;
    if (lo > hi) lo = hi;
    const int taps = g->KH * g->KW;
    long c0 = 0;
#if DW_ZMM
    for (; c0 + 16 <= C; c0 += 16) direct16(x, g, xo, w, out, ldo, f, e, oy0, rows, c0, lo, hi, act, TAPS, S1);
#endif
    for (long c = c0; c < C; c += 8) {
        __m256 wv[TAPS > 0 ? TAPS : 1];
        for (int t = 0; t < TAPS; t++) wv[t] = _mm256_loadu_ps(w + t * C + c);
        for (long oy = oy0; oy < oy0 + rows; oy++) {
            const long iy0 = oy * g->sh - g->ph, p = oy * OW;
            float *o = out + (p - p0) * ldo + c;
            const int inside = iy0 >= 0 && iy0 + reach_y < g->H;
            const long a = inside ? lo : OW, b = inside ? hi : OW;
            for (long ox = 0; ox < a; ox++)
                put8(o + ox * ldo, pixel_border(x, g, w, c, oy, ox), f, e, p + ox, c, 8, act);
            const float *r = x + (iy0 * W + a * g->sw - g->pw) * C + c;
            long ox = a;
            if (S1) /* 3x3 stride 1: four pixels at a time, each input column loaded once (as rows3x3) */
                for (; ox + 4 <= b; ox += 4, r += 4 * sx) {
                    __m256 a0, a1, a2, a3;
                    four3x3(r, W * C, C, wv, &a0, &a1, &a2, &a3);
                    put8(o + ox * ldo, a0, f, e, p + ox, c, 8, act);
                    put8(o + (ox + 1) * ldo, a1, f, e, p + ox + 1, c, 8, act);
                    put8(o + (ox + 2) * ldo, a2, f, e, p + ox + 2, c, 8, act);
                    put8(o + (ox + 3) * ldo, a3, f, e, p + ox + 3, c, 8, act);
                }
            for (; ox + BP <= b; ox += BP, r += BP * sx) {
                __m256 acc[BP];
                for (int j = 0; j < BP; j++) acc[j] = _mm256_setzero_ps();
                for (int t = 0; t < (TAPS > 0 ? TAPS : taps); t++) {
                    const __m256 wt = TAPS > 0 ? wv[t] : _mm256_loadu_ps(w + t * C + c);
                    for (int j = 0; j < BP; j++)
                        acc[j] = _mm256_fmadd_ps(wt, _mm256_loadu_ps(r + j * sx + xo[t]), acc[j]);
                }
                for (int j = 0; j < BP; j++) put8(o + (ox + j) * ldo, acc[j], f, e, p + ox + j, c, 8, act);
            }
            for (; ox < b; ox++, r += sx) {
                __m256 acc = _mm256_setzero_ps();
                for (int t = 0; t < (TAPS > 0 ? TAPS : taps); t++) {
                    const __m256 wt = TAPS > 0 ? wv[t] : _mm256_loadu_ps(w + t * C + c);
                    acc = _mm256_fmadd_ps(wt, _mm256_loadu_ps(r + xo[t]), acc);
                }
                put8(o + ox * ldo, acc, f, e, p + ox, c, 8, act);
            }
            for (ox = b > a ? b : a; ox < OW; ox++)
                put8(o + ox * ldo, pixel_border(x, g, w, c, oy, ox), f, e, p + ox, c, 8, act);
        }
    }
}

static void band_direct_any(const float *x, const be_conv_geo *g, const long *xo, const float *w, float *out, long ldo,
                            const fast_epi *f, const be_epi *e, long oy0, long rows, int act) {
    /* 3x3: the tap weights in registers; stride 1 without dilation: four pixels share their columns' loads */
    const int t9 = g->KH * g->KW == 9, s1 = dw_k3s1(g);
#define DIRECT(ACT)                                                                                                    \
    s1   ? band_direct(x, g, xo, w, out, ldo, f, e, oy0, rows, ACT, 9, 1)                                              \
    : t9 ? band_direct(x, g, xo, w, out, ldo, f, e, oy0, rows, ACT, 9, 0)                                              \
         : band_direct(x, g, xo, w, out, ldo, f, e, oy0, rows, ACT, 0, 0)
    switch (act) {
    case BE_ACT_NONE: DIRECT(BE_ACT_NONE); break;
    case BE_ACT_RELU: DIRECT(BE_ACT_RELU); break;
    case BE_ACT_CLIP: DIRECT(BE_ACT_CLIP); break;
    default: DIRECT(-1);
    }
#undef DIRECT
}

/* one band with the activation resolved at compile time for the common ones */
static void band_fast(const float *buf, long wp, long c8, const be_conv_geo *g, const long *offs, const float *w,
                      float *out, long ldo, const fast_epi *f, const be_epi *e, long p0, long p1, int act) {
    switch (act) {
    case BE_ACT_NONE: band_avx2(buf, wp, c8, g, offs, w, out, ldo, f, e, p0, p1, BE_ACT_NONE); break;
    case BE_ACT_RELU: band_avx2(buf, wp, c8, g, offs, w, out, ldo, f, e, p0, p1, BE_ACT_RELU); break;
    case BE_ACT_CLIP: band_avx2(buf, wp, c8, g, offs, w, out, ldo, f, e, p0, p1, BE_ACT_CLIP); break;
    default: band_avx2(buf, wp, c8, g, offs, w, out, ldo, f, e, p0, p1, -1); break;
    }
}

/* a band read in place from the NHWC input (band_direct), then continue */
#define DWC_DIRECT_VEC()                                                                                               \
    if (d->direct) {                                                                                                   \
        be_epi ep = *d->e;                                                                                             \
        if (ep.add1) ep.add1 += n * C * ohw;                                                                           \
        const long pstart = oy0 * g->OW;                                                                               \
        float *out = out_nhwc ? d->y + (n * ohw + pstart) * C : obuf;                                                  \
        const fast_epi f = {ep.add0, ep.add1, C, ep.p0, ep.p1};                                                        \
        band_direct_any(d->x + n * C * ihw, g, d->xoffs, d->w, out, out_nhwc ? C : c8, &f, &ep, oy0, rows, d->act);    \
        if (!out_nhwc) {                                                                                               \
            float *yo = d->y + n * C * ohw + pstart;                                                                   \
            for (int c = 0; c < C; c++)                                                                                \
                for (long p = 0; p < rows * g->OW; p++) yo[c * ohw + p] = obuf[p * c8 + c];                            \
        }                                                                                                              \
        continue;                                                                                                      \
    }

/* the band with the set's vector kernel, `else` the portable blocks */
#define DWC_BAND_VEC()                                                                                                 \
    if (!d->portable) {                                                                                                \
        const fast_epi f = {ep.add0, ep.add1, C, ep.p0, ep.p1};                                                        \
        band_fast(buf, wp, c8, g, d->offs, d->w, out, ldo, &f, &ep, pstart, pend, d->act);                             \
    } else

#include "conv_dw_nhwc_loops.h"
