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
 *     registers and take 4 pixels of a row at a time, each input column loaded once for the pixels that read it
 *     (AVX-512 builds: 16 channels per zmm and pixel by pixel, dw_rows3x3_16, the last 8 or fewer as above);
 *  3. + bias, the exact requantisation rule on 8 lanes (per-channel parameters; AVX-512 builds: two pixels as
 *     16 lanes), stored as 8 int8 channels of a pixel (NHWC) or scattered into 8 planes (NCHW).
 * Integer results do not depend on the thread count or the band split.
 */
#include "qconv.h"
#include "x86_qgemm.h"
#include "qconv_dw_nhwc_loops.h"

typedef float v8f __attribute__((vector_size(32))); /* one ymm, or two q registers */
static inline __attribute__((always_inline)) v8f ld8(const float *p) {
    v8f v;
    memcpy(&v, p, sizeof v);
    return v;
}
/* a + b * c: one FMA where the target has it (integer-valued products and sums: exact either way) */
static inline __attribute__((always_inline)) v8f fma8(v8f a, v8f b, v8f c) {
    return (v8f)_mm256_fmadd_ps((__m256)b, (__m256)c, (__m256)a);
}

/* the requantisation constants of 8 channels cb .. cb+7 (per-channel arrays are padded to 16) */
typedef struct {
    be_rqv q;
    __m256i bias;
    __m128i zp16, lo, hi;
#ifdef BE_ISA_X86_VNNI512
    be_rqv16 q2; /* the same 8 channels twice: two pixels per zmm */
    __m512i bias2;
#endif
} dwq;

static inline __attribute__((always_inline)) dwq dwq_make(const be_qepi *e, long cb) {
    dwq d;
    d.q = be_rqv_make(_mm256_loadu_si256((const __m256i *)(e->mult + cb)),
                      _mm256_loadu_si256((const __m256i *)(e->shift + cb)),
                      _mm256_loadu_si256((const __m256i *)(e->lim + cb)));
    d.bias = e->bias ? _mm256_loadu_si256((const __m256i *)(e->bias + cb)) : _mm256_setzero_si256();
    d.zp16 = _mm_set1_epi16((int16_t)e->zp);
    d.lo = _mm_set1_epi8((int8_t)e->lo);
    d.hi = _mm_set1_epi8((int8_t)e->hi);
#ifdef BE_ISA_X86_VNNI512
    d.q2 = be_rqv16_make(_mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(e->mult + cb))),
                         _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(e->shift + cb))),
                         _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(e->lim + cb))));
    d.bias2 = _mm512_broadcast_i64x4(d.bias);
#endif
    return d;
}

/* requantise 8 channels of one pixel (integer-valued floats) and store n of them, dstride apart */
static inline __attribute__((always_inline)) void dw_out8(const float *acc, const dwq *d, int n, int8_t *dst,
                                                          long dstride) {
    int8_t out[8];
    const __m256i t = be_rq8(_mm256_add_epi32(_mm256_cvtps_epi32(_mm256_loadu_ps(acc)), d->bias), &d->q);
    __m128i p = _mm_adds_epi16(_mm_packs_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1)), d->zp16);
    p = _mm_min_epi8(_mm_max_epi8(_mm_packs_epi16(p, p), d->lo), d->hi);
    if (n == 8 && dstride == 1) {
        _mm_storel_epi64((__m128i *)dst, p);
        return;
    }
    _mm_storel_epi64((__m128i *)out, p);
    for (int i = 0; i < n; i++) dst[i * dstride] = out[i];
}

/* dw_out8 of two pixels (acc0 to dst0, acc1 to dst1) in one pass: AVX-512 builds requantise them as 16 lanes
 * (be_rq16, then the same saturating narrowing and clamp) */
static inline __attribute__((always_inline)) void dw_out8x2(const float *acc0, const float *acc1, const dwq *d,
                                                            int n, int8_t *dst0, int8_t *dst1, long dstride) {
#ifdef BE_ISA_X86_VNNI512
    const __m512i a = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_cvtps_epi32(_mm256_loadu_ps(acc0))),
                                         _mm256_cvtps_epi32(_mm256_loadu_ps(acc1)), 1);
    const __m512i t = be_rq16(_mm512_add_epi32(a, d->bias2), &d->q2);
    const __m256i p = _mm256_adds_epi16(_mm512_cvtsepi32_epi16(t), _mm256_broadcastsi128_si256(d->zp16));
    const __m128i b = _mm_min_epi8(_mm_max_epi8(_mm256_cvtsepi16_epi8(p), d->lo), d->hi);
    if (n == 8 && dstride == 1) {
        _mm_storel_epi64((__m128i *)dst0, b);
        _mm_storel_epi64((__m128i *)dst1, _mm_unpackhi_epi64(b, b));
        return;
    }
    int8_t out[16];
    _mm_storeu_si128((__m128i *)out, b);
    for (int i = 0; i < n; i++) dst0[i * dstride] = out[i], dst1[i * dstride] = out[8 + i];
#else
    dw_out8(acc0, d, n, dst0, dstride);
    dw_out8(acc1, d, n, dst1, dstride);
#endif
}

/* four output pixels of a 3x3 stride-1 row, channels of one 8-block: the input rows start at r, r + rs, r + 2*rs,
 * consecutive pixels c8 floats apart; each input column is loaded once and meets the (up to 3) pixels reading it
 * (sums of integers below 2^24: exact in any order) */
static inline __attribute__((always_inline)) void dw_four3x3(const float *r, long rs, long c8, const v8f *wv,
                                                             v8f *o) {
    v8f a0 = {0, 0, 0, 0, 0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0;
    for (int ky = 0; ky < 3; ky++) {
        const float *q = r + ky * rs;
        const v8f k0 = wv[ky * 3], k1 = wv[ky * 3 + 1], k2 = wv[ky * 3 + 2];
        v8f x = ld8(q);
        a0 = fma8(a0, k0, x);
        x = ld8(q + c8);
        a0 = fma8(a0, k1, x);
        a1 = fma8(a1, k0, x);
        x = ld8(q + 2 * c8);
        a0 = fma8(a0, k2, x);
        a1 = fma8(a1, k1, x);
        a2 = fma8(a2, k0, x);
        x = ld8(q + 3 * c8);
        a1 = fma8(a1, k2, x);
        a2 = fma8(a2, k1, x);
        a3 = fma8(a3, k0, x);
        x = ld8(q + 4 * c8);
        a2 = fma8(a2, k2, x);
        a3 = fma8(a3, k1, x);
        x = ld8(q + 5 * c8);
        a3 = fma8(a3, k2, x);
    }
    o[0] = a0, o[1] = a1, o[2] = a2, o[3] = a3;
}

/* 3x3, stride 1, no dilation, OW >= 4: output rows oy0 .. oy1-1, the 9 tap weights of each 8-channel block in
 * registers, 4 pixels of a row at a time (each input column loaded once), the rest of a row one by one.
 * Out of line with few live values (an inlined variant-rich loop spills). */
static __attribute__((noinline)) void dw_rows3x3(const float *buf, long wp, long c8, const be_qconv_geo *g,
                                                 const float *wf, const be_qepi *e, long oy0, long oy1, int out_nhwc,
                                                 int8_t *yi, long cb0) {
    const long OW = g->OW, ohw = (long)g->OH * OW, C = g->C, rs = wp * c8;
    for (long cb = cb0; cb < C; cb += 8) {
        const int n = (int)(C - cb < 8 ? C - cb : 8);
        const dwq q = dwq_make(e, cb);
        v8f wv[9];
        for (int t = 0; t < 9; t++) wv[t] = ld8(wf + (long)t * c8 + cb);
        for (long oy = oy0; oy < oy1; oy++) {
            const float *r0 = buf + (oy - oy0) * rs + cb;
            const long p = oy * OW;
            long ox = 0;
            float acc[4][8];
            for (; ox + 4 <= OW; ox += 4) {
                v8f o[4];
                dw_four3x3(r0 + ox * c8, rs, c8, wv, o);
                memcpy(acc, o, sizeof acc);
                for (int i = 0; i < 4; i += 2) {
                    if (out_nhwc)
                        dw_out8x2(acc[i], acc[i + 1], &q, n, yi + (p + ox + i) * C + cb, yi + (p + ox + i + 1) * C + cb,
                                  1);
                    else
                        dw_out8x2(acc[i], acc[i + 1], &q, n, yi + cb * ohw + p + ox + i, yi + cb * ohw + p + ox + i + 1,
                                  ohw);
                }
            }
            for (; ox < OW; ox++) {
                v8f a = {0, 0, 0, 0, 0, 0, 0, 0};
                for (int t = 0; t < 9; t++) a = fma8(a, wv[t], ld8(r0 + (t / 3) * rs + (ox + t % 3) * c8));
                memcpy(acc[0], &a, sizeof a);
                if (out_nhwc)
                    dw_out8(acc[0], &q, n, yi + (p + ox) * C + cb, 1);
                else
                    dw_out8(acc[0], &q, n, yi + cb * ohw + p + ox, ohw);
            }
        }
    }
}

#ifdef BE_ISA_X86_VNNI512
/* dw_rows3x3 on 16 channels per zmm (two 8-channel blocks of a pixel are adjacent in the band): blocks cb < C - 8,
 * requantised as 16 lanes (be_rq16; channel arrays are padded to 16); returns the first channel it left (a last
 * block of 8 or fewer, for dw_rows3x3) */
static __attribute__((noinline)) long dw_rows3x3_16(const float *buf, long wp, long c8, const be_qconv_geo *g,
                                                    const float *wf, const be_qepi *e, long oy0, long oy1,
                                                    int out_nhwc, int8_t *yi) {
    const long OW = g->OW, ohw = (long)g->OH * OW, C = g->C, rs = wp * c8;
    const __m256i zp16 = _mm256_set1_epi16((int16_t)e->zp);
    const __m128i lo = _mm_set1_epi8((int8_t)e->lo), hi = _mm_set1_epi8((int8_t)e->hi);
    long cb = 0;
    for (; cb + 8 < C; cb += 16) {
        const int n = (int)(C - cb < 16 ? C - cb : 16);
        const __mmask16 keep = (__mmask16)((1u << n) - 1u);
        const be_rqv16 q = be_rqv16_make(_mm512_loadu_si512((const void *)(e->mult + cb)),
                                         _mm512_loadu_si512((const void *)(e->shift + cb)),
                                         _mm512_loadu_si512((const void *)(e->lim + cb)));
        const __m512i bias = e->bias ? _mm512_loadu_si512((const void *)(e->bias + cb)) : _mm512_setzero_si512();
        __m512 w[9];
        for (int t = 0; t < 9; t++) w[t] = _mm512_loadu_ps(wf + (long)t * c8 + cb);
        for (long oy = oy0; oy < oy1; oy++) {
            const float *r0 = buf + (oy - oy0) * rs + cb;
            const long p = oy * OW;
            for (long ox = 0; ox < OW; ox++) {
                __m512 a = _mm512_setzero_ps();
                for (int t = 0; t < 9; t++)
                    a = _mm512_fmadd_ps(w[t], _mm512_loadu_ps(r0 + (t / 3) * rs + (ox + t % 3) * c8), a);
                const __m512i v = be_rq16(_mm512_add_epi32(_mm512_cvtps_epi32(a), bias), &q);
                const __m128i b = _mm_min_epi8(_mm_max_epi8(_mm256_cvtsepi16_epi8(_mm256_adds_epi16(
                                                   _mm512_cvtsepi32_epi16(v), zp16)), lo), hi);
                if (out_nhwc) {
                    _mm_mask_storeu_epi8(yi + (p + ox) * C + cb, keep, b);
                } else {
                    int8_t out[16];
                    _mm_storeu_si128((__m128i *)out, b);
                    for (int i = 0; i < n; i++) yi[(cb + i) * ohw + p + ox] = out[i];
                }
            }
        }
    }
    return cb;
}
#endif

/* output rows oy0 .. oy1-1 of one image from its filled band (padded row oy0*sh at buf row 0) */
static void dw_band(const float *buf, long wp, long c8, const be_qconv_geo *g, const long *off, const float *wf,
                    const be_qepi *e, long oy0, long oy1, int out_nhwc, int8_t *yi) {
    const int taps = g->KH * g->KW;
    const long ohw = (long)g->OH * g->OW, npix = (oy1 - oy0) * g->OW, C = g->C;
    if (g->KH == 3 && g->KW == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1 && g->OW >= 4) {
#ifdef BE_ISA_X86_VNNI512
        const long cb = dw_rows3x3_16(buf, wp, c8, g, wf, e, oy0, oy1, out_nhwc, yi);
#else
        const long cb = 0;
#endif
        dw_rows3x3(buf, wp, c8, g, wf, e, oy0, oy1, out_nhwc, yi, cb);
        return;
    }
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
            v8f va[DP];
            for (int i = 0; i < DP; i++) va[i] = (v8f){0, 0, 0, 0, 0, 0, 0, 0};
            for (int t = 0; t < taps; t++) {
                const v8f w = ld8(wf + (long)t * c8 + cb);
                for (int i = 0; i < DP; i++) va[i] = fma8(va[i], ld8(base[i] + off[t]), w);
            }
            for (int i = 0; i < DP; i++) memcpy(acc[i], &va[i], sizeof(v8f));
            int i = 0;
            for (; i + 2 <= np; i += 2) {
                const long p = oy0 * g->OW + p0 + i;
                if (out_nhwc)
                    dw_out8x2(acc[i], acc[i + 1], &q, n, yi + p * C + cb, yi + (p + 1) * C + cb, 1);
                else
                    dw_out8x2(acc[i], acc[i + 1], &q, n, yi + cb * ohw + p, yi + cb * ohw + p + 1, ohw);
            }
            for (; i < np; i++) {
                const long p = oy0 * g->OW + p0 + i;
                if (out_nhwc)
                    dw_out8(acc[i], &q, n, yi + p * C + cb, 1);
                else
                    dw_out8(acc[i], &q, n, yi + cb * ohw + p, ohw);
            }
        }
    }
}
