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
#include "arm_qgemm.h"

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
            const int16x8_t zp = vdupq_n_s16((int16_t)x_zp);
            for (; ix + 8 <= wmax; ix += 8) {
                const int16x8_t v = vsubq_s16(vmovl_s8(vld1_s8(src + ix)), zp); /* |x - zp| <= 255 */
                vst1q_f32(d + ix, vcvtq_f32_s32(vmovl_s16(vget_low_s16(v))));
                vst1q_f32(d + ix + 4, vcvtq_f32_s32(vmovl_s16(vget_high_s16(v))));
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

#ifdef BE_ISA_AARCH64
#define DW_UNITS 4 /* 8-wide output runs per pass: 8 accumulators (aarch64: 32 registers) */
#else
#define DW_UNITS 2 /* armv7: 4 accumulators of 16 registers */
#endif
#if defined(BE_ISA_AARCH64) || defined(BE_ISA_NEON_FMA)
#define DW_FMA(acc, x, w) vfmaq_f32(acc, x, w)
#else
#define DW_FMA(acc, x, w) vmlaq_f32(acc, x, w) /* exact too: integer values below 2^24 */
#endif

static inline __attribute__((always_inline)) void dw_neon_units(const int units, const float *buf, long rstep,
                                                                int chunks, long u, const long *off, const float *w,
                                                                int8_t *yp, const be_qconv_geo *g, const be_rqn *q,
                                                                int32x4_t bias, int16x8_t zp16, int8x8_t lo,
                                                                int8x8_t hi) {
    const float *base[DW_UNITS];
    float32x4_t acc[DW_UNITS][2];
    for (int i = 0; i < units; i++) {
        base[i] = buf + (u + i) / chunks * rstep + (u + i) % chunks * 8;
        acc[i][0] = acc[i][1] = vdupq_n_f32(0.0f);
    }
    for (int t = 0; t < g->KH * g->KW; t++) {
        const float32x4_t wv = vdupq_n_f32(w[t]);
        for (int i = 0; i < units; i++) {
            acc[i][0] = DW_FMA(acc[i][0], vld1q_f32(base[i] + off[t]), wv);
            acc[i][1] = DW_FMA(acc[i][1], vld1q_f32(base[i] + off[t] + 4), wv);
        }
    }
    for (int i = 0; i < units; i++) {
        const long oy = (u + i) / chunks, cx = (u + i) % chunks;
        const int32x4_t t0 = be_rq4n(vaddq_s32(vcvtq_s32_f32(acc[i][0]), bias), q);
        const int32x4_t t1 = be_rq4n(vaddq_s32(vcvtq_s32_f32(acc[i][1]), bias), q);
        const int n = g->OW - (int)cx * 8 < 8 ? g->OW - (int)cx * 8 : 8;
        be_store8n(yp + oy * g->OW + cx * 8, be_rqn_pack8(t0, t1, zp16, lo, hi), n);
    }
}

/* one output channel m of a filled plane: DW_UNITS runs of 8 outputs at a time, all taps, then the rule */
void be_qdwconv_neon_channel(const float *buf, long row, const long *off, const float *w, int8_t *yp,
                             const be_qepi *e, const be_qconv_geo *g, long m) {
    const int chunks = (g->OW + 7) / 8;
    const be_rqn q = be_rqn_bcast(e->mult[m], e->shift[m], e->lim[m]);
    const int32x4_t bias = vdupq_n_s32(e->bias ? e->bias[m] : 0);
    const int16x8_t zp16 = vdupq_n_s16((int16_t)e->zp);
    const int8x8_t lo = vdup_n_s8((int8_t)e->lo), hi = vdup_n_s8((int8_t)e->hi);
    const long units = (long)g->OH * chunks, rstep = (long)g->sh * g->sw * row;
    long u = 0;
    for (; u + DW_UNITS <= units; u += DW_UNITS)
        dw_neon_units(DW_UNITS, buf, rstep, chunks, u, off, w, yp, g, &q, bias, zp16, lo, hi);
    for (; u < units; u++) dw_neon_units(1, buf, rstep, chunks, u, off, w, yp, g, &q, bias, zp16, lo, hi);
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
            be_qdwconv_neon_channel(buf, row, off, wf + m * taps, yp, e, g, m);
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
