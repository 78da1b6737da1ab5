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
/* -- depthwise ----------------------------------------------------------------------------------------------- */
static void dw_portable_plane(const int8_t *xp, const float *wf, int8_t *yp, const be_qepi *e, const be_qconv_geo *g,
                              int32_t x_zp, long m) {
    for (int oy = 0; oy < g->OH; oy++)
        for (int ox = 0; ox < g->OW; ox++) {
            int64_t acc = 0;
            for (int ky = 0; ky < g->KH; ky++) {
                const int iy = oy * g->sh - g->ph + ky * g->dh;
                if (iy < 0 || iy >= g->H) continue;
                for (int kx = 0; kx < g->KW; kx++) {
                    const int ix = ox * g->sw - g->pw + kx * g->dw;
                    if (ix < 0 || ix >= g->W) continue;
                    acc += (int64_t)(xp[(long)iy * g->W + ix] - x_zp) * (int64_t)wf[ky * g->KW + kx];
                }
            }
            uint32_t v = (uint32_t)acc + (e->bias ? (uint32_t)e->bias[m] : 0u);
            yp[(long)oy * g->OW + ox] = be_rq1((int32_t)v, e->mult[m], e->shift[m], e->lim[m], e->zp, e->lo, e->hi);
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
    (void)scratch, (void)tid;
    for (long p = lo; p < hi; p++) {
        const int n = (int)(p / g->C), c = (int)(p % g->C);
        for (int k = 0; k < mult; k++) {
            const long m = (long)c * mult + k;
            int8_t *yp = y + ((long)n * g->M + m) * ohw;
            dw_portable_plane(x + p * hw, wf + m * taps, yp, e, g, x_zp, m);
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
