/* The stem convolution: KxK, one group, an NCHW input with few channels (3 for RGB), any stride/dilation/padding.
 *
 * Why: with C = 3 a pixel holds 3 floats, so the channels-last implicit GEMM (conv_nhwc.c) needs a transposed
 * padded copy of the image and then one broadcast per pixel per tap, a load for every multiply-add. Here the
 * vectors run along output pixels of a row instead, and the weights are the broadcasts, each one meeting 24 pixels.
 *
 * Algorithm, per image:
 *  1. the input is split once into a zero-padded "phase image": for each channel c, padded row r and column phase
 *     p < sw, the padded columns p, p + sw, p + 2sw, ... one after the other (stride 2: even and odd columns apart,
 *     deinterleaved with AVX2 shuffles from the input rows); then the input of output pixel ox under tap
 *     (c, ky, kx) in output row oy
 *     sits at phase offset ox + (kx*dw)/sw of row oy*sh + ky*dh, phase (kx*dw) % sw: consecutive output pixels read
 *     consecutive floats, and a table holds each tap's offset;
 *  2. a tile is 4 output channels x 24 pixels of one output row (12 accumulators); per tap three 8-wide input
 *     loads meet four broadcast weights in 12 FMAs; taps in (c, ky, kx) order for every output;
 *  3. the epilogue: accumulators start from the bias, then Relu/Clip in registers, stored as rows (NCHW) or,
 *     transposed 4x8 in registers, as 4-channel pieces of pixels (NHWC); any other epilogue goes through a tile
 *     buffer and be_epi_apply.
 * Threads split the output rows; every output is the same sum in the same order whatever the thread count.
 */
#include "conv_stem.h"
#include "x86_dense.h"

/* build_phases, stride 2: the set's deinterleave of row iy (q advanced), before the scalar loop */
#define STEM_PHASES_VEC()                                                                                              \
    if (sw == 2) { /* the scalar head up to the first pair inside the row, then 16 columns -> 8 even + 8 odd */        \
        for (; q < wq && 2 * q - pw < 0; q++)                                                                          \
            for (long p = 0; p < 2; p++) {                                                                             \
                const long ix = 2 * q + p - pw;                                                                        \
                d[p * wq + q] = ix >= 0 && ix < W ? s[ix] : 0.0f;                                                      \
            }                                                                                                          \
        for (; q + 8 <= wq; q += 8) { /* past the row's end: masked loads give zeros (the right padding) */            \
            const long ix = 2 * q - pw;                                                                                \
            __m256 a, b;                                                                                               \
            if (ix + 16 <= W) {                                                                                        \
                a = _mm256_loadu_ps(s + ix), b = _mm256_loadu_ps(s + ix + 8);                                          \
            } else {                                                                                                   \
                const long left = W - ix > 0 ? W - ix : 0;                                                             \
                a = _mm256_maskload_ps(s + ix, be_mask8((int)(left < 8 ? left : 8)));                                  \
                b = _mm256_maskload_ps(s + ix + 8, be_mask8((int)(left > 8 ? left - 8 : 0)));                          \
            }                                                                                                          \
            const __m256 ev = _mm256_shuffle_ps(a, b, 0x88), od = _mm256_shuffle_ps(a, b, 0xDD);                       \
            _mm256_storeu_ps(d + q, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xD8)));              \
            _mm256_storeu_ps(d + wq + q, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(od), 0xD8)));         \
        }                                                                                                              \
    }

#include "conv_stem_common.h"

/* 4 channels (one vector each) of 8 pixels px0.. stored channels-last: pixel i gets 4 floats at y + i*M */
static inline __attribute__((always_inline)) void store_nhwc8(float *y, long M, int n, __m256 a0, __m256 a1, __m256 a2,
                                                              __m256 a3) {
    const __m256 t0 = _mm256_unpacklo_ps(a0, a1), t1 = _mm256_unpackhi_ps(a0, a1);
    const __m256 t2 = _mm256_unpacklo_ps(a2, a3), t3 = _mm256_unpackhi_ps(a2, a3);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m128 px[8] = {_mm256_castps256_ps128(u0),   _mm256_castps256_ps128(u1),   _mm256_castps256_ps128(u2),
                          _mm256_castps256_ps128(u3),   _mm256_extractf128_ps(u0, 1), _mm256_extractf128_ps(u1, 1),
                          _mm256_extractf128_ps(u2, 1), _mm256_extractf128_ps(u3, 1)};
    for (int i = 0; i < n; i++) _mm_storeu_ps(y + i * M, px[i]);
}

/* one channel's 8 pixels as a row (NCHW) */
static inline __attribute__((always_inline)) void store_row8(float *y, int n, __m256 v) {
    if (n >= 8) {
        _mm256_storeu_ps(y, v);
    } else if (n > 0) {
        _mm256_maskstore_ps(y, be_mask8(n), v);
    }
}

/* steps 2 and 3 for one tile: act >= 0 the fast epilogue (bias start, Relu/Clip), act < 0 raw sums into tb */
static inline __attribute__((always_inline)) void tile_avx2(const float *src, const int *toff, long K, const float *w,
                                                            const float *bias, float *y, int nhwc,
                                                            const be_conv_geo *g, const be_epi *e, long oy, long x0,
                                                            long m0, float *tb, const int act) {
    __m256 c00 = _mm256_setzero_ps(), c10 = c00, c20 = c00, c30 = c00;
    if (act >= 0 && bias) {
        c00 = _mm256_set1_ps(bias[m0]);
        if (m0 + 1 < g->M) c10 = _mm256_set1_ps(bias[m0 + 1]);
        if (m0 + 2 < g->M) c20 = _mm256_set1_ps(bias[m0 + 2]);
        if (m0 + 3 < g->M) c30 = _mm256_set1_ps(bias[m0 + 3]);
    }
    __m256 c01 = c00, c02 = c00, c11 = c10, c12 = c10, c21 = c20, c22 = c20, c31 = c30, c32 = c30;
    for (long k = 0; k < K; k++) {
        const float *s = src + toff[k], *wk = w + k * 4;
        const __m256 v0 = _mm256_loadu_ps(s), v1 = _mm256_loadu_ps(s + 8), v2 = _mm256_loadu_ps(s + 16);
        __m256 t = _mm256_broadcast_ss(wk);
        c00 = _mm256_fmadd_ps(t, v0, c00), c01 = _mm256_fmadd_ps(t, v1, c01), c02 = _mm256_fmadd_ps(t, v2, c02);
        t = _mm256_broadcast_ss(wk + 1);
        c10 = _mm256_fmadd_ps(t, v0, c10), c11 = _mm256_fmadd_ps(t, v1, c11), c12 = _mm256_fmadd_ps(t, v2, c12);
        t = _mm256_broadcast_ss(wk + 2);
        c20 = _mm256_fmadd_ps(t, v0, c20), c21 = _mm256_fmadd_ps(t, v1, c21), c22 = _mm256_fmadd_ps(t, v2, c22);
        t = _mm256_broadcast_ss(wk + 3);
        c30 = _mm256_fmadd_ps(t, v0, c30), c31 = _mm256_fmadd_ps(t, v1, c31), c32 = _mm256_fmadd_ps(t, v2, c32);
    }
    if (act < 0) {
        const __m256 all[12] = {c00, c01, c02, c10, c11, c12, c20, c21, c22, c30, c31, c32};
        for (int i = 0; i < 12; i++) _mm256_storeu_ps(tb + i * 8, all[i]);
        store_generic(tb, y, nhwc, g, e, oy, x0, m0);
        return;
    }
    const float p0 = e->p0, p1 = e->p1;
    c00 = be_act8(c00, act, p0, p1), c01 = be_act8(c01, act, p0, p1), c02 = be_act8(c02, act, p0, p1);
    c10 = be_act8(c10, act, p0, p1), c11 = be_act8(c11, act, p0, p1), c12 = be_act8(c12, act, p0, p1);
    c20 = be_act8(c20, act, p0, p1), c21 = be_act8(c21, act, p0, p1), c22 = be_act8(c22, act, p0, p1);
    c30 = be_act8(c30, act, p0, p1), c31 = be_act8(c31, act, p0, p1), c32 = be_act8(c32, act, p0, p1);
    const long M = g->M, ohw = (long)g->OH * g->OW, pix = oy * g->OW + x0;
    const int n0 = (int)(g->OW - x0), n1 = n0 - 8, n2 = n0 - 16;
    if (nhwc && m0 + 4 <= M) {
        float *d = y + pix * M + m0;
        store_nhwc8(d, M, n0 < 8 ? n0 : 8, c00, c10, c20, c30);
        if (n1 > 0) store_nhwc8(d + 8 * M, M, n1 < 8 ? n1 : 8, c01, c11, c21, c31);
        if (n2 > 0) store_nhwc8(d + 16 * M, M, n2 < 8 ? n2 : 8, c02, c12, c22, c32);
        return;
    }
    if (nhwc) { /* the last, partial channel group: through the tile buffer */
        const __m256 all[12] = {c00, c01, c02, c10, c11, c12, c20, c21, c22, c30, c31, c32};
        for (int i = 0; i < 12; i++) _mm256_storeu_ps(tb + i * 8, all[i]);
        for (int i = 0; i < 4 && m0 + i < M; i++)
            for (long j = 0; j < BE_STEM_PX && x0 + j < g->OW; j++) y[(pix + j) * M + m0 + i] = tb[i * BE_STEM_PX + j];
        return;
    }
    const __m256 rows[4][3] = {{c00, c01, c02}, {c10, c11, c12}, {c20, c21, c22}, {c30, c31, c32}};
    for (int i = 0; i < 4 && m0 + i < M; i++) {
        float *d = y + (m0 + i) * ohw + pix;
        store_row8(d, n0, rows[i][0]);
        store_row8(d + 8, n1, rows[i][1]);
        store_row8(d + 16, n2, rows[i][2]);
    }
}

/* stem_row: the set's tile with the fast epilogue by activation (continue), else the portable tile */
#define STEM_TILE_VEC()                                                                                                \
    const float *b = e->add0;                                                                                          \
    const long m0 = q * 4;                                                                                             \
    switch (act) {                                                                                                     \
    case BE_ACT_NONE: tile_avx2(src, toff, K, w, b, y, nhwc, g, e, oy, x0, m0, tb, BE_ACT_NONE); continue;             \
    case BE_ACT_RELU: tile_avx2(src, toff, K, w, b, y, nhwc, g, e, oy, x0, m0, tb, BE_ACT_RELU); continue;             \
    case BE_ACT_CLIP: tile_avx2(src, toff, K, w, b, y, nhwc, g, e, oy, x0, m0, tb, BE_ACT_CLIP); continue;             \
    case -1: tile_avx2(src, toff, K, w, b, y, nhwc, g, e, oy, x0, m0, tb, -1); continue;                               \
    default: break;                                                                                                    \
    }

#include "conv_stem_loops.h"
