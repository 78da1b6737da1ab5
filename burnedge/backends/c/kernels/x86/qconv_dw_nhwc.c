/* int8 depthwise convolution with channels-last (NHWC) rows, vectorised along channels (be_qdwconv_nhwc_i8,
 * multiplier 1), reading an NCHW or NHWC input and writing an NCHW or NHWC output (flags: 1 = input NHWC,
 * 2 = output NHWC); the implicit GEMM of other convs is qconv_nhwc.c.
 *
 * Why: on the small planes of edge CNNs (25x5, 12x12, 6x6) a per-plane depthwise kernel wastes most of its 8-wide
 * runs; with rows = output pixels and columns = channels, vectors run along channels.
 *
 * The input rows are written, minus x_zp, as floats into a zero-padded NHWC block of C8 (C rounded up to 8)
 * channels per pixel, so every tap of a pixel is at a fixed offset without bounds checks; the taps accumulate with
 * float multiply-adds: integers, exact (sums of at most 512 products of magnitude <= 255 * 128 stay below 2^24,
 * qconv.h), so order, contraction or vector width change no bit; + bias, then the exact requantisation rule.
 *
 * AVX2 builds (the reference driver's bands, ~32 KiB of padded floats, be_qdw_nhwc_band):
 *  8 channels at a time, blocks of 4 output pixels; 3x3 stride-1 kernels (dw_rows3x3) keep the 9 tap weights in
 *  registers and take 4 pixels of a row at a time, each input column loaded once for the pixels that read it; the
 *  rule on 8 lanes, stored as 8 int8 channels of a pixel (NHWC) or scattered into 8 planes (NCHW).
 * AVX-512 builds (BE_ISA_X86_VNNI512; DW_RANGE, a job = a range [oy0, oy1) of output rows of one image):
 *  1. a ring of the (KH-1)*dh+1 padded input rows an output row reads, each input row converted once per job
 *     (a band re-converted the rows it shared with the next: 3x for a 3x3 stride-1 band of one row);
 *  2. per output row, 16 channels per zmm (the last 8 masked: C8 % 16 == 8), blocks of 8 output pixels, any
 *     kernel size, stride and dilation (3x3 and 5x5 of stride 1 and 2 unrolled at compile time, their weights
 *     in registers for 3x3), the width tail 4 pixels, then one by one;
 *  3. the rule on 16 lanes (be_rq16), four pixels narrowed at once (be_rq_narrow64), masked stores of the channel
 *     tail (NHWC) or a scatter into the planes (NCHW).
 *  3x3 kernels of stride 1 or 2 across on NHWC inputs of whole 16-channel blocks take int16 pairs instead
 *  (dw_range_pairs): the ring holds horizontally adjacent pixels paired, raw (x_zp outside the image, x_zp * sum(w)
 *  out of the bias), and an output pixel is 6 vpdpwssd with int32 accumulators: no float conversions.
 * Integer results do not depend on the thread count or the job split.
 */
#include "qconv.h"
#include "x86_qgemm.h"

/* d[i] = s[i] - x_zp as floats, n a multiple of 8 (dw_fill's whole-row copy) */
static inline void dw_convert8(float *d, const int8_t *s, long n, int32_t x_zp) {
    const __m256i z = _mm256_set1_epi32(x_zp);
    for (long i = 0; i < n; i += 8)
        _mm256_storeu_ps(d + i, _mm256_cvtepi32_ps(_mm256_sub_epi32(
                                    _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(s + i))), z)));
}
#define DW_CONVERT(d, s, n, x_zp) dw_convert8((d), (s), (n), (x_zp))

#ifdef BE_ISA_X86_VNNI512
static void dw_range16(const int8_t *xi, int flags, const be_qconv_geo *g, long c8, long wp, const float *wf,
                       const be_qepi *e, int32_t x_zp, long oy0, long oy1, float *ring, int8_t *yi);
/* rows per job: one job per image on one thread (the ring converts each input row once), else about 4 per thread
 * (at least a band's: each job refills its first KH-1 ring rows) */
static inline long dw_job_rows(const be_qconv_geo *g, int nt) {
    const long band = be_qdw_nhwc_band(g), rows = ((long)g->OH + 4 * nt - 1) / (4 * nt);
    return nt <= 1 ? g->OH : (rows > band ? rows : band);
}
#define DW_RANGE dw_range16
#define DW_JOB_ROWS(g, nt) dw_job_rows(g, nt)
#endif
#include "qconv_dw_nhwc_loops.h"

#ifndef BE_ISA_X86_VNNI512

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

/* dw_out8 of two pixels (acc0 to dst0, acc1 to dst1) */
static inline __attribute__((always_inline)) void dw_out8x2(const float *acc0, const float *acc1, const dwq *d,
                                                            int n, int8_t *dst0, int8_t *dst1, long dstride) {
    dw_out8(acc0, d, n, dst0, dstride);
    dw_out8(acc1, d, n, dst1, dstride);
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

/* output rows oy0 .. oy1-1 of one image from its filled band (padded row oy0*sh at buf row 0) */
static void dw_band(const float *buf, long wp, long c8, const be_qconv_geo *g, const long *off, const float *wf,
                    const be_qepi *e, long oy0, long oy1, int out_nhwc, int8_t *yi) {
    const int taps = g->KH * g->KW;
    const long ohw = (long)g->OH * g->OW, npix = (oy1 - oy0) * g->OW, C = g->C;
    if (g->KH == 3 && g->KW == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1 && g->OW >= 4) {
        dw_rows3x3(buf, wp, c8, g, wf, e, oy0, oy1, out_nhwc, yi, 0);
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
#else /* BE_ISA_X86_VNNI512 */
/* -- AVX-512: the row ring and 16 channels per zmm ------------------------------------------------------------ */

/* d[i] = s[i] - x_zp as floats for i < n (n a multiple of 8: the last 8 masked) */
static inline void convert16(float *d, const int8_t *s, long n, __m512i z) {
    long i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(d + i, _mm512_cvtepi32_ps(_mm512_sub_epi32(
                                    _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(s + i))), z)));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(d + i, m, _mm512_cvtepi32_ps(_mm512_sub_epi32(
                                            _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, s + i)), z)));
    }
}

/* padded input row r (padded coordinates) of image xi into dst ([wp][c8] floats minus x_zp, zeros in the padding
 * and past C); NHWC rows vectorised here (C == c8: one run; else per pixel, masked to C and c8), the rest dw_fill */
static void ring_fill(const int8_t *xi, int in_nhwc, const be_qconv_geo *g, long c8, long wp, long r, int32_t x_zp,
                      float *dst) {
    const long iy = r - g->ph, C = g->C;
    const long lpad = g->pw < wp ? g->pw : wp, wn = g->W < wp - g->pw ? g->W : wp - g->pw, right = wp - g->pw - g->W;
    if (!in_nhwc || iy < 0 || iy >= g->H || wn <= 0) {
        dw_fill(xi, in_nhwc, g, c8, wp, r, 1, x_zp, dst);
        return;
    }
    if (lpad > 0) memset(dst, 0, (size_t)(lpad * c8) * sizeof(float));
    if (right > 0) memset(dst + (g->pw + g->W) * c8, 0, (size_t)(right * c8) * sizeof(float));
    const int8_t *s = xi + iy * g->W * C;
    float *d = dst + g->pw * c8;
    const __m512i z = _mm512_set1_epi32(x_zp);
    if (C == c8) {
        convert16(d, s, wn * C, z);
        return;
    }
    for (long ix = 0; ix < wn; ix++)
        for (long c = 0; c < c8; c += 16) {
            const long nv = C - c, nl = c8 - c < 16 ? c8 - c : 16;
            const __mmask16 lm = (__mmask16)(nv >= 16 ? 0xFFFFu : (1u << nv) - 1u);
            const __m512i v = _mm512_maskz_sub_epi32(lm, _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(lm, s + ix * C + c)), z);
            _mm512_mask_storeu_ps(d + ix * c8 + c, (__mmask16)((1u << nl) - 1u), _mm512_cvtepi32_ps(v));
        }
}

/* the requantisation of one 16-channel block, and where its pixels go */
typedef struct {
    be_rqv16 q;
    __m512i bias, zp16, lo, hi;
    __mmask16 keep; /* the channels < C of the block */
    int n;          /* their count */
} dwq16;

/* four pixels' integer-valued float sums: + bias, the rule, narrowed as one (lane i = pixel i), and the first np
 * stored: NHWC at dst + i*C (masked to the block's channels), or scattered into the planes (dst + c*ohw + i) */
static inline __attribute__((always_inline)) void out4(const dwq16 *d, __m512 a0, __m512 a1, __m512 a2, __m512 a3,
                                                      int np, int out_nhwc, int8_t *dst, long C, long ohw) {
    const __m512i t0 = be_rq16(_mm512_add_epi32(_mm512_cvtps_epi32(a0), d->bias), &d->q);
    const __m512i t1 = np > 1 ? be_rq16(_mm512_add_epi32(_mm512_cvtps_epi32(a1), d->bias), &d->q) : t0;
    const __m512i t2 = np > 2 ? be_rq16(_mm512_add_epi32(_mm512_cvtps_epi32(a2), d->bias), &d->q) : t0;
    const __m512i t3 = np > 3 ? be_rq16(_mm512_add_epi32(_mm512_cvtps_epi32(a3), d->bias), &d->q) : t0;
    const __m512i b = be_rq_narrow64(t0, t1, t2, t3, d->zp16, d->lo, d->hi);
    if (out_nhwc) {
        const __m128i o[4] = {_mm512_castsi512_si128(b), _mm512_extracti32x4_epi32(b, 1),
                              _mm512_extracti32x4_epi32(b, 2), _mm512_extracti32x4_epi32(b, 3)};
        for (int i = 0; i < np; i++) _mm_mask_storeu_epi8(dst + i * C, d->keep, o[i]);
        return;
    }
    int8_t out[64];
    _mm512_storeu_si512((void *)out, b);
    for (int c = 0; c < d->n; c++)
        for (int i = 0; i < np; i++) dst[c * ohw + i] = out[16 * i + c];
}

/* one output row, every 16-channel block: KH, KW, SW compile-time where non-zero (dilation 1), else g's; rows[ky] =
 * the ring row of tap row ky. Blocks of 8 pixels (8 accumulators; 3x3 weights in registers, larger kernels' from
 * L1), the tail as a block of 4, then pixel by pixel. Loads of a block's masked half read the next pixel's floats
 * (or the scratch's slack past the ring), which only reach lanes that are never stored. */
static inline __attribute__((always_inline)) void row16(const int KH, const int KW, const int SW,
                                                       const float *const *rows, const be_qconv_geo *g, long c8,
                                                       const float *wf, const be_qepi *e, long oy, int out_nhwc,
                                                       int8_t *yi) {
    const long kh = KH ? KH : g->KH, kw = KW ? KW : g->KW, swc = (SW ? SW : g->sw) * c8;
    const long dwc = (KH ? 1 : g->dw) * c8, OW = g->OW, C = g->C, ohw = (long)g->OH * OW;
    const int PRE = KH && KH * KW <= 9; /* weights in registers */
    dwq16 d;
    d.zp16 = _mm512_set1_epi16((int16_t)e->zp);
    d.lo = _mm512_set1_epi8((int8_t)e->lo);
    d.hi = _mm512_set1_epi8((int8_t)e->hi);
    for (long cb = 0; cb < C; cb += 16) {
        const __mmask16 lm = (__mmask16)(c8 - cb < 16 ? 0xFFu : 0xFFFFu);
        d.n = (int)(C - cb < 16 ? C - cb : 16);
        d.keep = (__mmask16)((1u << d.n) - 1u);
        d.q = be_rqv16_make(_mm512_loadu_si512((const void *)(e->mult + cb)),
                            _mm512_loadu_si512((const void *)(e->shift + cb)),
                            _mm512_loadu_si512((const void *)(e->lim + cb)));
        d.bias = e->bias ? _mm512_maskz_loadu_epi32(d.keep, e->bias + cb) : _mm512_setzero_si512();
        __m512 w9[9];
        if (PRE)
            for (int t = 0; t < KH * KW; t++) w9[t] = _mm512_maskz_loadu_ps(lm, wf + (long)t * c8 + cb);
#define WTAP(t) (PRE ? w9[(t)] : _mm512_maskz_loadu_ps(lm, wf + (long)(t) * c8 + cb))
        int8_t *yrow = out_nhwc ? yi + oy * OW * C + cb : yi + cb * ohw + oy * OW;
        const long px = out_nhwc ? C : 1; /* one pixel further in y */
        long ox = 0;
        for (; ox + 8 <= OW; ox += 8) {
            __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
            for (long ky = 0; ky < kh; ky++) {
                const float *r = rows[ky] + cb + ox * swc;
                for (long kx = 0; kx < kw; kx++) {
                    const __m512 w = WTAP(ky * kw + kx);
                    const float *q = r + kx * dwc;
                    a0 = _mm512_fmadd_ps(w, _mm512_loadu_ps(q), a0);
                    a1 = _mm512_fmadd_ps(w, _mm512_loadu_ps(q + swc), a1);
                    a2 = _mm512_fmadd_ps(w, _mm512_loadu_ps(q + 2 * swc), a2);
                    a3 = _mm512_fmadd_ps(w, _mm512_loadu_ps(q + 3 * swc), a3);
                    a4 = _mm512_fmadd_ps(w, _mm512_loadu_ps(q + 4 * swc), a4);
                    a5 = _mm512_fmadd_ps(w, _mm512_loadu_ps(q + 5 * swc), a5);
                    a6 = _mm512_fmadd_ps(w, _mm512_loadu_ps(q + 6 * swc), a6);
                    a7 = _mm512_fmadd_ps(w, _mm512_loadu_ps(q + 7 * swc), a7);
                }
            }
            out4(&d, a0, a1, a2, a3, 4, out_nhwc, yrow + ox * px, C, ohw);
            out4(&d, a4, a5, a6, a7, 4, out_nhwc, yrow + (ox + 4) * px, C, ohw);
        }
        if (ox + 4 <= OW) { /* then a block of 4: the small planes' tails (28, 14 pixels) */
            __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
            for (long ky = 0; ky < kh; ky++) {
                const float *r = rows[ky] + cb + ox * swc;
                for (long kx = 0; kx < kw; kx++) {
                    const __m512 w = WTAP(ky * kw + kx);
                    const float *q = r + kx * dwc;
                    a0 = _mm512_fmadd_ps(w, _mm512_loadu_ps(q), a0);
                    a1 = _mm512_fmadd_ps(w, _mm512_loadu_ps(q + swc), a1);
                    a2 = _mm512_fmadd_ps(w, _mm512_loadu_ps(q + 2 * swc), a2);
                    a3 = _mm512_fmadd_ps(w, _mm512_loadu_ps(q + 3 * swc), a3);
                }
            }
            out4(&d, a0, a1, a2, a3, 4, out_nhwc, yrow + ox * px, C, ohw);
            ox += 4;
        }
        for (; ox < OW; ox++) {
            __m512 a = _mm512_setzero_ps();
            for (long ky = 0; ky < kh; ky++) {
                const float *r = rows[ky] + cb + ox * swc;
                for (long kx = 0; kx < kw; kx++) a = _mm512_fmadd_ps(WTAP(ky * kw + kx), _mm512_loadu_ps(r + kx * dwc), a);
            }
            out4(&d, a, a, a, a, 1, out_nhwc, yrow + ox * px, C, ohw);
        }
#undef WTAP
    }
}

static __attribute__((noinline)) void row16_3x3s1(const float *const *rows, const be_qconv_geo *g, long c8,
                                                  const float *wf, const be_qepi *e, long oy, int nhwc, int8_t *yi) {
    row16(3, 3, 1, rows, g, c8, wf, e, oy, nhwc, yi);
}
static __attribute__((noinline)) void row16_3x3s2(const float *const *rows, const be_qconv_geo *g, long c8,
                                                  const float *wf, const be_qepi *e, long oy, int nhwc, int8_t *yi) {
    row16(3, 3, 2, rows, g, c8, wf, e, oy, nhwc, yi);
}
static __attribute__((noinline)) void row16_5x5s1(const float *const *rows, const be_qconv_geo *g, long c8,
                                                  const float *wf, const be_qepi *e, long oy, int nhwc, int8_t *yi) {
    row16(5, 5, 1, rows, g, c8, wf, e, oy, nhwc, yi);
}
static __attribute__((noinline)) void row16_5x5s2(const float *const *rows, const be_qconv_geo *g, long c8,
                                                  const float *wf, const be_qepi *e, long oy, int nhwc, int8_t *yi) {
    row16(5, 5, 2, rows, g, c8, wf, e, oy, nhwc, yi);
}
static __attribute__((noinline)) void row16_any(const float *const *rows, const be_qconv_geo *g, long c8,
                                                const float *wf, const be_qepi *e, long oy, int nhwc, int8_t *yi) {
    row16(0, 0, 0, rows, g, c8, wf, e, oy, nhwc, yi);
}

/* -- AVX-512, 3x3 of stride 1 or 2 on NHWC rows of whole 16-channel blocks: int16 pairs and vpdpwssd ----------- */
/* A ring row holds pairs of horizontally adjacent input pixels as int16 (minus x_zp, zero outside the image):
 * pair j, channel c = the int32 at dst[j*C + c], low half pixel j*SW, high half pixel j*SW + 1 (padded columns).
 * An output pixel ox then reads pair ox (taps kx = 0, 1) and pair ox + 2 / SW (tap 2 against a zero weight) of each
 * tap row: 6 vpdpwssd (exact int32 sums of int16 products, |x - x_zp| <= 255) instead of 9 float FMAs, and the
 * accumulators start at the bias, so the rule needs no conversion. Each input row is paired once (stride 1: every
 * pair, each pixel converted once; stride 2: the even pairs), into the float ring's room (a pair per pixel at most). */
static const int16_t DW_PAIRS[32] = {0, 32, 1, 33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
                                     8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};

/* padded pixel p of a row (image row s) as 16 int16, x_zp outside the image */
static inline __attribute__((always_inline)) __m256i dw_px16(const int8_t *s, long p, const be_qconv_geo *g, long C,
                                                            __m256i zp) {
    const long ix = p - g->pw;
    if (ix < 0 || ix >= g->W) return zp;
    return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(s + ix * C)));
}

/* padded input row r as pairs (pair j: pixels j*sw and j*sw + 1), raw int8 values widened to int16 and x_zp
 * outside the image (row_pairs takes x_zp * sum(w) out of the bias); pairs of two image pixels are the bytes of
 * both interleaved and sign-extended at once */
static void pair_fill(const int8_t *xi, const be_qconv_geo *g, long wp, long r, int32_t x_zp, int32_t *dst) {
    const long iy = r - g->ph, C = g->C, sw = g->sw, npair = sw == 1 ? wp : (wp + 1) / 2;
    const __m256i zp = _mm256_set1_epi16((int16_t)x_zp);
    if (iy < 0 || iy >= g->H) {
        const __m512i zz = _mm512_castsi256_si512(zp);
        const __m512i z2 = _mm512_inserti64x4(zz, zp, 1);
        for (long i = 0; i < npair * C; i += 16) _mm512_storeu_si512((void *)(dst + i), z2);
        return;
    }
    const int8_t *s = xi + iy * g->W * C;
    const __m512i idx = _mm512_loadu_si512((const void *)DW_PAIRS);
    /* pairs j in [j0, j1) have both pixels in the image */
    const long j0 = (g->pw + sw - 1) / sw, j1e = (g->pw + g->W - 1 + sw - 1) / sw;
    const long j1 = j1e < npair ? j1e : npair;
    for (long j = 0; j < npair; j++) {
        if (j == j0 && j0 < j1) {
            for (; j < j1; j++) {
                const int8_t *q = s + (j * sw - g->pw) * C;
                int32_t *d = dst + j * C;
                for (long c = 0; c < C; c += 16) {
                    const __m128i a = _mm_loadu_si128((const __m128i *)(q + c));
                    const __m128i b = _mm_loadu_si128((const __m128i *)(q + C + c));
                    const __m256i ab = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi8(a, b)),
                                                               _mm_unpackhi_epi8(a, b), 1);
                    _mm512_storeu_si512((void *)(d + c), _mm512_cvtepi8_epi16(ab));
                }
            }
            if (j >= npair) break;
        }
        for (long c = 0; c < C; c += 16) {
            const __m512i a = _mm512_castsi256_si512(dw_px16(s + c, j * sw, g, C, zp));
            const __m512i b = _mm512_castsi256_si512(dw_px16(s + c, j * sw + 1, g, C, zp));
            _mm512_storeu_si512((void *)(dst + j * C + c), _mm512_permutex2var_epi16(a, idx, b));
        }
    }
}

/* four pixels' int32 sums (bias in them): the rule, narrowed, stored as out4 does */
static inline __attribute__((always_inline)) void out4i(const dwq16 *d, __m512i a0, __m512i a1, __m512i a2, __m512i a3,
                                                       int np, int out_nhwc, int8_t *dst, long C, long ohw) {
    const __m512i t0 = be_rq16(a0, &d->q), t1 = np > 1 ? be_rq16(a1, &d->q) : t0;
    const __m512i t2 = np > 2 ? be_rq16(a2, &d->q) : t0, t3 = np > 3 ? be_rq16(a3, &d->q) : t0;
    const __m512i b = be_rq_narrow64(t0, t1, t2, t3, d->zp16, d->lo, d->hi);
    if (out_nhwc) {
        const __m128i o[4] = {_mm512_castsi512_si128(b), _mm512_extracti32x4_epi32(b, 1),
                              _mm512_extracti32x4_epi32(b, 2), _mm512_extracti32x4_epi32(b, 3)};
        for (int i = 0; i < np; i++) _mm_storeu_si128((__m128i *)(dst + i * C), o[i]);
        return;
    }
    int8_t out[64];
    _mm512_storeu_si512((void *)out, b);
    for (int c = 0; c < 16; c++)
        for (int i = 0; i < np; i++) dst[c * ohw + i] = out[16 * i + c];
}

/* one output row of the paired ring (rows[ky]: tap row ky), SW = 1 or 2 */
static inline __attribute__((always_inline)) void row_pairs(const int SW, const int32_t *const *rows,
                                                           const be_qconv_geo *g, const float *wf, const be_qepi *e,
                                                           int32_t x_zp, long oy, int out_nhwc, int8_t *yi) {
    const long OW = g->OW, C = g->C, ohw = (long)g->OH * OW, far = (2 / SW) * C;
    const __m512i lo16 = _mm512_set1_epi32(0xFFFF), zpv = _mm512_set1_epi32(x_zp);
    dwq16 d;
    d.zp16 = _mm512_set1_epi16((int16_t)e->zp);
    d.lo = _mm512_set1_epi8((int8_t)e->lo);
    d.hi = _mm512_set1_epi8((int8_t)e->hi);
    d.n = 16;
    d.keep = 0xFFFF;
    for (long cb = 0; cb < C; cb += 16) {
        d.q = be_rqv16_make(_mm512_loadu_si512((const void *)(e->mult + cb)),
                            _mm512_loadu_si512((const void *)(e->shift + cb)),
                            _mm512_loadu_si512((const void *)(e->lim + cb)));
        __m512i bias = e->bias ? _mm512_loadu_si512((const void *)(e->bias + cb)) : _mm512_setzero_si512();
        __m512i wn[3], wz[3]; /* (w[ky][0], w[ky][1]) and (w[ky][2], 0) as int16 pairs */
        for (int ky = 0; ky < 3; ky++) {
            const __m512i w0 = _mm512_cvtps_epi32(_mm512_loadu_ps(wf + (long)(3 * ky) * C + cb));
            const __m512i w1 = _mm512_cvtps_epi32(_mm512_loadu_ps(wf + (long)(3 * ky + 1) * C + cb));
            const __m512i w2 = _mm512_cvtps_epi32(_mm512_loadu_ps(wf + (long)(3 * ky + 2) * C + cb));
            wn[ky] = _mm512_or_si512(_mm512_and_si512(w0, lo16), _mm512_slli_epi32(w1, 16));
            wz[ky] = _mm512_and_si512(w2, lo16);
            /* bias - x_zp * sum(w) (wrapping, like the sums) */
            bias = _mm512_sub_epi32(bias, _mm512_mullo_epi32(zpv, _mm512_add_epi32(_mm512_add_epi32(w0, w1), w2)));
        }
        int8_t *yrow = out_nhwc ? yi + oy * OW * C + cb : yi + cb * ohw + oy * OW;
        const long px = out_nhwc ? C : 1;
        long ox = 0;
        for (; ox + 8 <= OW; ox += 8) {
            __m512i a[8];
            for (int i = 0; i < 8; i++) a[i] = bias;
            for (int ky = 0; ky < 3; ky++) {
                const int32_t *q = rows[ky] + cb + ox * C;
                for (int i = 0; i < 8; i++) {
                    a[i] = _mm512_dpwssd_epi32(a[i], _mm512_loadu_si512((const void *)(q + i * C)), wn[ky]);
                    a[i] = _mm512_dpwssd_epi32(a[i], _mm512_loadu_si512((const void *)(q + i * C + far)), wz[ky]);
                }
            }
            out4i(&d, a[0], a[1], a[2], a[3], 4, out_nhwc, yrow + ox * px, C, ohw);
            out4i(&d, a[4], a[5], a[6], a[7], 4, out_nhwc, yrow + (ox + 4) * px, C, ohw);
        }
        for (; ox < OW; ox += 4) { /* the tail: blocks of up to 4 (the last pixels repeated, not stored) */
            const int np = (int)(OW - ox < 4 ? OW - ox : 4);
            __m512i a[4];
            for (int i = 0; i < 4; i++) a[i] = bias;
            for (int ky = 0; ky < 3; ky++)
                for (int i = 0; i < 4; i++) {
                    const int32_t *q = rows[ky] + cb + (ox + (i < np ? i : 0)) * C;
                    a[i] = _mm512_dpwssd_epi32(a[i], _mm512_loadu_si512((const void *)q), wn[ky]);
                    a[i] = _mm512_dpwssd_epi32(a[i], _mm512_loadu_si512((const void *)(q + far)), wz[ky]);
                }
            out4i(&d, a[0], a[1], a[2], a[3], np, out_nhwc, yrow + ox * px, C, ohw);
        }
    }
}

static __attribute__((noinline)) void row_pairs_s1(const int32_t *const *rows, const be_qconv_geo *g, const float *wf,
                                                   const be_qepi *e, int32_t x_zp, long oy, int nhwc, int8_t *yi) {
    row_pairs(1, rows, g, wf, e, x_zp, oy, nhwc, yi);
}
static __attribute__((noinline)) void row_pairs_s2(const int32_t *const *rows, const be_qconv_geo *g, const float *wf,
                                                   const be_qepi *e, int32_t x_zp, long oy, int nhwc, int8_t *yi) {
    row_pairs(2, rows, g, wf, e, x_zp, oy, nhwc, yi);
}

/* dw_range16 for the paired ring (3x3, stride 1 or 2 across, no dilation, NHWC input, C % 16 == 0) */
static void dw_range_pairs(const int8_t *xi, int flags, const be_qconv_geo *g, long c8, long wp, const float *wf,
                           const be_qepi *e, int32_t x_zp, long oy0, long oy1, int32_t *ring, int8_t *yi) {
    const long R = 3, rs = wp * c8;
    const int nhwc = (flags & 2) != 0;
    const int32_t *rows[3];
    long next = oy0 * g->sh;
    for (long oy = oy0; oy < oy1; oy++) {
        const long top = oy * g->sh;
        if (next < top) next = top;
        for (; next < top + R; next++) pair_fill(xi, g, wp, next, x_zp, ring + (next % R) * rs);
        for (int ky = 0; ky < 3; ky++) rows[ky] = ring + ((top + ky) % R) * rs;
        if (g->sw == 1)
            row_pairs_s1(rows, g, wf, e, x_zp, oy, nhwc, yi);
        else
            row_pairs_s2(rows, g, wf, e, x_zp, oy, nhwc, yi);
    }
}

/* output rows [oy0, oy1) of one image (a job of the driver; any range, so any split of the rows over threads):
 * the ring holds padded input rows r at ring + (r % R) * wp * c8; each output row first fills the rows it reads
 * that the ring lacks, then runs one row16 variant over it */
static void dw_range16(const int8_t *xi, int flags, const be_qconv_geo *g, long c8, long wp, const float *wf,
                       const be_qepi *e, int32_t x_zp, long oy0, long oy1, float *ring, int8_t *yi) {
    const long R = (long)(g->KH - 1) * g->dh + 1, rs = wp * c8;
    const int nhwc = (flags & 2) != 0, unit = g->dw == 1 && g->dh == 1;
    if (unit && g->KH == 3 && g->KW == 3 && (g->sw == 1 || g->sw == 2) && (flags & 1) && g->C % 16 == 0) {
        dw_range_pairs(xi, flags, g, c8, wp, wf, e, x_zp, oy0, oy1, (int32_t *)ring, yi);
        return;
    }
    void (*row)(const float *const *, const be_qconv_geo *, long, const float *, const be_qepi *, long, int,
                int8_t *) = row16_any;
    if (unit && g->KH == 3 && g->KW == 3 && g->sw == 1) row = row16_3x3s1;
    if (unit && g->KH == 3 && g->KW == 3 && g->sw == 2) row = row16_3x3s2;
    if (unit && g->KH == 5 && g->KW == 5 && g->sw == 1) row = row16_5x5s1;
    if (unit && g->KH == 5 && g->KW == 5 && g->sw == 2) row = row16_5x5s2;
    const float *rows[g->KH];
    long next = oy0 * g->sh; /* the first padded input row the ring lacks */
    for (long oy = oy0; oy < oy1; oy++) {
        const long top = oy * g->sh;
        if (next < top) next = top;
        for (; next < top + R; next++) ring_fill(xi, flags & 1, g, c8, wp, next, x_zp, ring + (next % R) * rs);
        for (int ky = 0; ky < g->KH; ky++) rows[ky] = ring + ((top + (long)ky * g->dh) % R) * rs;
        row(rows, g, c8, wf, e, oy, nhwc, yi);
    }
}
#endif
