/* int8 depthwise convolution (NCHW: one input channel per group, any multiplier, stride, dilation, padding).
 *
 * Per input plane (threads over planes):
 *  1. the plane minus x_zp is written as floats into a thread buffer zeroed once (padding positions are never
 *     written), split by column phase of the stride so that every tap reads consecutive floats;
 *  2. for each of its output channels, groups of four 8-wide output runs accumulate all taps with FMAs (exact:
 *     see qconv.h), then + bias and requantise 8 lanes at a time.
 * ARM: the same steps with NEON (vld2 deinterleaves, float32x4 taps, the exact NEON rule).
 */
#include "qconv.h"
#include "workers.h"
#include "x86_qgemm.h"

/* the plane minus x_zp as floats: padded row r, column phase f, position j at buf[(r*sw + f)*row + j] */
static void dw_fill_plane(const int8_t *xp, const be_qconv_geo *g, int32_t x_zp, long row, long rows, float *buf) {
    const long lim = row * g->sw - g->pw; /* columns past the row are never read */
    const int wmax = (int)(lim < g->W ? lim : g->W);
    for (long r = 0; r < rows; r++) {
        const int iy = (int)r - g->ph;
        if (iy < 0 || iy >= g->H) continue;
        const int8_t *src = xp + (long)iy * g->W;
        if (g->sw == 1) {
            float *d = buf + r * row + g->pw;
            int ix = 0;
            const __m256i zp = _mm256_set1_epi32(x_zp);
            for (; ix + 8 <= wmax; ix += 8) {
                __m256i v = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(src + ix)));
                _mm256_storeu_ps(d + ix, _mm256_cvtepi32_ps(_mm256_sub_epi32(v, zp)));
            }
            for (; ix < wmax; ix++) d[ix] = (float)(src[ix] - x_zp);
            continue;
        }
        for (int f = 0; f < g->sw; f++) { /* phase f holds padded columns j*sw + f */
            float *d = buf + (r * g->sw + f) * row;
            long j = g->pw > f ? (g->pw - f + g->sw - 1) / g->sw : 0;
            for (long ix = j * g->sw + f - g->pw; ix < wmax; ix += g->sw, j++) d[j] = (float)(src[ix] - x_zp);
        }
    }
}

static void dw_offsets(const be_qconv_geo *g, long row, long *off) {
    for (int ky = 0; ky < g->KH; ky++)
        for (int kx = 0; kx < g->KW; kx++) {
            const long c = (long)kx * g->dw;
            off[ky * g->KW + kx] = ((long)ky * g->dh * g->sw + c % g->sw) * row + c / g->sw;
        }
}

static inline __attribute__((always_inline)) void dw_store8(__m256 acc, const be_rqv *q, __m256i bias, __m128i zp16,
                                                            __m128i lo, __m128i hi, int8_t *dst, int n) {
    const __m256i t = be_rq8(_mm256_add_epi32(_mm256_cvtps_epi32(acc), bias), q);
    __m128i p = _mm_adds_epi16(_mm_packs_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1)), zp16);
    p = _mm_min_epi8(_mm_max_epi8(_mm_packs_epi16(p, p), lo), hi);
    if (n == 8) {
        _mm_storel_epi64((__m128i *)dst, p);
    } else {
        int8_t tmp[16];
        _mm_storeu_si128((__m128i *)tmp, p);
        memcpy(dst, tmp, (size_t)n);
    }
}

static void dw_avx2_channel(const float *buf, long row, const long *off, const float *w, int8_t *yp,
                            const be_qepi *e, const be_qconv_geo *g, long m) {
    const int taps = g->KH * g->KW, chunks = (g->OW + 7) / 8;
    const be_rqv q = be_rqv_bcast(e->mult[m], e->shift[m], e->lim[m]);
    const __m256i bias = _mm256_set1_epi32(e->bias ? e->bias[m] : 0);
    const __m128i zp16 = _mm_set1_epi16((int16_t)e->zp);
    const __m128i lo = _mm_set1_epi8((int8_t)e->lo), hi = _mm_set1_epi8((int8_t)e->hi);
    const long units = (long)g->OH * chunks, rstep = (long)g->sh * g->sw * row;
    long u = 0;
    for (; u + 4 <= units; u += 4) {
        const float *base[4];
        int8_t *dst[4];
        int n[4];
        for (int i = 0; i < 4; i++) {
            const long oy = (u + i) / chunks, cx = (u + i) % chunks;
            base[i] = buf + oy * rstep + cx * 8;
            dst[i] = yp + oy * g->OW + cx * 8;
            n[i] = g->OW - (int)cx * 8 < 8 ? g->OW - (int)cx * 8 : 8;
        }
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (int t = 0; t < taps; t++) {
            const __m256 wv = _mm256_broadcast_ss(w + t);
            a0 = _mm256_fmadd_ps(_mm256_loadu_ps(base[0] + off[t]), wv, a0);
            a1 = _mm256_fmadd_ps(_mm256_loadu_ps(base[1] + off[t]), wv, a1);
            a2 = _mm256_fmadd_ps(_mm256_loadu_ps(base[2] + off[t]), wv, a2);
            a3 = _mm256_fmadd_ps(_mm256_loadu_ps(base[3] + off[t]), wv, a3);
        }
        dw_store8(a0, &q, bias, zp16, lo, hi, dst[0], n[0]);
        dw_store8(a1, &q, bias, zp16, lo, hi, dst[1], n[1]);
        dw_store8(a2, &q, bias, zp16, lo, hi, dst[2], n[2]);
        dw_store8(a3, &q, bias, zp16, lo, hi, dst[3], n[3]);
    }
    for (; u < units; u++) {
        const long oy = u / chunks, cx = u % chunks;
        const float *b = buf + oy * rstep + cx * 8;
        __m256 a0 = _mm256_setzero_ps();
        for (int t = 0; t < taps; t++) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(b + off[t]), _mm256_broadcast_ss(w + t), a0);
        const int n = g->OW - (int)cx * 8 < 8 ? g->OW - (int)cx * 8 : 8;
        dw_store8(a0, &q, bias, zp16, lo, hi, yp + oy * g->OW + cx * 8, n);
    }
}

typedef struct {
    const int8_t *x;
    const float *wf;
    int8_t *y;
    const be_qepi *e;
    const be_qconv_geo *g;
    int32_t x_zp;
    float *scratch;
} qdw_call;

/* planes lo .. hi-1 (image n, channel c: its mult output channels) on thread tid's slice */
static void qdw_planes(void *ctx, int tid, long lo, long hi) {
    const qdw_call *a = ctx;
    const int8_t *x = a->x;
    const float *wf = a->wf;
    int8_t *y = a->y;
    const be_qepi *e = a->e;
    const be_qconv_geo *g = a->g;
    const int32_t x_zp = a->x_zp;
    float *scratch = a->scratch;
    const long hw = (long)g->H * g->W, ohw = (long)g->OH * g->OW;
    const int mult = g->M / g->C, taps = g->KH * g->KW;
    const long row = be_qdwconv_row(g), rows = (long)(g->OH - 1) * g->sh + (long)(g->KH - 1) * g->dh + 1;
    float *buf = scratch + (long)tid * be_qdwconv_plane(g);
    long off[512];
    dw_offsets(g, row, off);
    /* padding and slack stay 0: every plane writes the same in-range positions */
    memset(buf, 0, (size_t)be_qdwconv_plane(g) * sizeof(float));
    for (long p = lo; p < hi; p++) {
        const int n = (int)(p / g->C), c = (int)(p % g->C);
        dw_fill_plane(x + p * hw, g, x_zp, row, rows, buf);
        for (int k = 0; k < mult; k++) {
            const long m = (long)c * mult + k;
            int8_t *yp = y + ((long)n * g->M + m) * ohw;
            dw_avx2_channel(buf, row, off, wf + m * taps, yp, e, g, m);
        }
    }
}

void be_qdwconv2d_i8(const int8_t *x, const float *wf, int8_t *y, const be_qepi *e, const be_qconv_geo *g,
                     int32_t x_zp, float *scratch, int threads) {
    const long planes = (long)g->N * g->C, ohw = (long)g->OH * g->OW;
    const int taps = g->KH * g->KW;
    int nt = threads < BE_Q_MAX_THREADS ? threads : BE_Q_MAX_THREADS;
    if ((double)g->N * g->M * ohw * taps < 100000.0) nt = 1;
    if (nt > planes) nt = (int)planes;
    qdw_call a = {x, wf, y, e, g, x_zp, scratch};
    be_parallel(nt, planes, qdw_planes, &a);
}
