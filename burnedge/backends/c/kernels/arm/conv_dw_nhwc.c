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
 * x86, strided convs on large NHWC planes with C % 8 == 0: no band copy at all (band_direct, below).
 * Every output is the same sum in the same order whatever the thread count and band split. NEON: the same loops
 * on 4-float vectors, 8 channels at a time on aarch64 and 4 on armv7 (16 q registers).
 */
#include "conv.h"
#include "arm_dense.h"

#include "conv_dw_nhwc_common.h"

/* NEON: channels in groups of CW = 4*NV (8 on aarch64 like AVX2; 4 on armv7, whose 16 q registers hold the 9 tap
 * vectors and 4 accumulators of rows3x3 but not twice that); the same sums in the same order */
#ifdef BE_ISA_AARCH64
#define NV 2
#else
#define NV 1
#endif
#define CW (4 * NV)

/* stores n <= CW outputs of pixel p, channels c.., with the epilogue; act < 0: the generic be_epi4_store */
static BE_AI void put_neon(float *out, const float32x4_t *v, const fast_epi *f, const be_epi *e, long p, long c, int n,
                           const int act) {
    for (int u = 0; u < NV && 4 * u < n; u++) {
        const int m = n - 4 * u < 4 ? n - 4 * u : 4;
        const long cu = c + 4 * u;
        if (act < 0) {
            be_epi4_store(out + 4 * u, v[u], e, p, cu, m);
            continue;
        }
        float32x4_t x = v[u];
        if (f->bias) x = vaddq_f32(x, be_ld4n(f->bias + cu, 1, m));
        if (f->res) x = vaddq_f32(x, be_ld4n(f->res + p * f->C + cu, 1, m));
        be_st4n(out + 4 * u, be_act4(x, act, f->p0, f->p1), m);
    }
}

/* chan8 for CW channels */
static BE_AI void chan_neon(const float *buf, long wp, long c8, const be_conv_geo *g, const long *offs, int taps,
                            const float *w, long c, int n, float *out, long ldo, const fast_epi *f, const be_epi *e,
                            long p0, long p1, const int act, const int TAPS) {
    const int nt = TAPS > 0 ? TAPS : taps;
    float32x4_t wv[TAPS > 0 ? TAPS : 1][NV];
    for (int t = 0; t < TAPS; t++)
        for (int u = 0; u < NV; u++) wv[t][u] = vld1q_f32(w + t * c8 + c + 4 * u);
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
        float32x4_t acc[BP][NV];
        for (int j = 0; j < BP; j++)
            for (int u = 0; u < NV; u++) acc[j][u] = vdupq_n_f32(0.0f);
        for (int t = 0; t < nt; t++) {
            const long o = offs[t];
            for (int u = 0; u < NV; u++) {
                const float32x4_t wt = TAPS > 0 ? wv[t][u] : vld1q_f32(w + t * c8 + c + 4 * u);
                for (int j = 0; j < BP; j++) acc[j][u] = be_fma4(acc[j][u], wt, vld1q_f32(b[j] + o + 4 * u));
            }
        }
        for (int j = 0; j < BP; j++)
            if (j < np) put_neon(out + (q + j) * ldo + c, acc[j], f, e, p + j, c, n, act);
    }
}

/* rows3x3 for CW channels: 4 pixels of a row at a time, each input column loaded once */
static BE_AI void rows3x3_neon(const float *buf, long wp, long c8, const be_conv_geo *g, const float *w, long c, int n,
                               float *out, long ldo, const fast_epi *f, const be_epi *e, long p0, long p1,
                               const int act) {
    float32x4_t wv[9][NV];
    for (int t = 0; t < 9; t++)
        for (int u = 0; u < NV; u++) wv[t][u] = vld1q_f32(w + t * c8 + c + 4 * u);
    const long OW = g->OW, rs = wp * c8;
    for (long oy = 0; oy < (p1 - p0) / OW; oy++) {
        const float *r0 = buf + oy * rs + c;
        float *o = out + oy * OW * ldo + c;
        const long p = p0 + oy * OW;
        long ox = 0;
        for (; ox + 4 <= OW; ox += 4) {
            float32x4_t a[4][NV];
            for (int j = 0; j < 4; j++)
                for (int u = 0; u < NV; u++) a[j][u] = vdupq_n_f32(0.0f);
            for (int ky = 0; ky < 3; ky++) {
                const float *r = r0 + ky * rs + ox * c8;
                for (int u = 0; u < NV; u++) {
                    const float32x4_t k0 = wv[ky * 3][u], k1 = wv[ky * 3 + 1][u], k2 = wv[ky * 3 + 2][u];
                    float32x4_t x = vld1q_f32(r + 4 * u);
                    a[0][u] = be_fma4(a[0][u], k0, x);
                    x = vld1q_f32(r + c8 + 4 * u);
                    a[0][u] = be_fma4(a[0][u], k1, x);
                    a[1][u] = be_fma4(a[1][u], k0, x);
                    x = vld1q_f32(r + 2 * c8 + 4 * u);
                    a[0][u] = be_fma4(a[0][u], k2, x);
                    a[1][u] = be_fma4(a[1][u], k1, x);
                    a[2][u] = be_fma4(a[2][u], k0, x);
                    x = vld1q_f32(r + 3 * c8 + 4 * u);
                    a[1][u] = be_fma4(a[1][u], k2, x);
                    a[2][u] = be_fma4(a[2][u], k1, x);
                    a[3][u] = be_fma4(a[3][u], k0, x);
                    x = vld1q_f32(r + 4 * c8 + 4 * u);
                    a[2][u] = be_fma4(a[2][u], k2, x);
                    a[3][u] = be_fma4(a[3][u], k1, x);
                    x = vld1q_f32(r + 5 * c8 + 4 * u);
                    a[3][u] = be_fma4(a[3][u], k2, x);
                }
            }
            for (int j = 0; j < 4; j++) put_neon(o + (ox + j) * ldo, a[j], f, e, p + ox + j, c, n, act);
        }
        for (; ox < OW; ox++) {
            float32x4_t a0[NV];
            for (int u = 0; u < NV; u++) {
                a0[u] = vdupq_n_f32(0.0f);
                for (int t = 0; t < 9; t++)
                    a0[u] = be_fma4(a0[u], wv[t][u], vld1q_f32(r0 + (t / 3) * rs + (ox + t % 3) * c8 + 4 * u));
            }
            put_neon(o + ox * ldo, a0, f, e, p + ox, c, n, act);
        }
    }
}

static BE_AI void band_neon(const float *buf, long wp, long c8, const be_conv_geo *g, const long *offs, const float *w,
                            float *out, long ldo, const fast_epi *f, const be_epi *e, long p0, long p1,
                            const int act) {
    const int taps = g->KH * g->KW, C = g->C;
    const int k3s1 = g->KH == 3 && g->KW == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1;
    for (long c = 0; c < C; c += CW) {
        const int n = C - c < CW ? (int)(C - c) : CW;
        if (k3s1 && g->OW >= 4)
            rows3x3_neon(buf, wp, c8, g, w, c, n, out, ldo, f, e, p0, p1, act);
        else if (taps == 9)
            chan_neon(buf, wp, c8, g, offs, taps, w, c, n, out, ldo, f, e, p0, p1, act, 9);
        else
            chan_neon(buf, wp, c8, g, offs, taps, w, c, n, out, ldo, f, e, p0, p1, act, 0);
    }
}

void be_dwconv_nhwc_band_neon(const float *buf, long wp, long c8, const be_conv_geo *g, const long *offs,
                              const float *w, float *out, long ldo, const fast_epi *f, const be_epi *e, long p0,
                              long p1, int act);
#define band_fast be_dwconv_nhwc_band_neon /* a symbol of its own: the ARM kernel archives show it */
void band_fast(const float *buf, long wp, long c8, const be_conv_geo *g, const long *offs, const float *w, float *out,
               long ldo, const fast_epi *f, const be_epi *e, long p0, long p1, int act) {
    switch (act) {
    case BE_ACT_NONE: band_neon(buf, wp, c8, g, offs, w, out, ldo, f, e, p0, p1, BE_ACT_NONE); break;
    case BE_ACT_RELU: band_neon(buf, wp, c8, g, offs, w, out, ldo, f, e, p0, p1, BE_ACT_RELU); break;
    case BE_ACT_CLIP: band_neon(buf, wp, c8, g, offs, w, out, ldo, f, e, p0, p1, BE_ACT_CLIP); break;
    default: band_neon(buf, wp, c8, g, offs, w, out, ldo, f, e, p0, p1, -1); break;
    }
}

#define DWC_DIRECT_VEC()

/* the band with the set's vector kernel, `else` the portable blocks */
#define DWC_BAND_VEC()                                                                                                 \
    if (!d->portable) {                                                                                                \
        const fast_epi f = {ep.add0, ep.add1, C, ep.p0, ep.p1};                                                        \
        band_fast(buf, wp, c8, g, d->offs, d->w, out, ldo, &f, &ep, pstart, pend, d->act);                             \
    } else

#include "conv_dw_nhwc_loops.h"
