/* Internal to the kernel sets: the band copy and the driver of qconv_dw_nhwc.c (reference/qconv_dw_nhwc.c has
 * the algorithm). A set's qconv_dw_nhwc.c includes this, then defines dw_band (the taps and the requantisation
 * of a band, 8 channels at a time). A set may instead take a job's output rows [oy0, oy1) itself: it defines
 * DW_RANGE(xi, flags, g, c8, wp, wf, e, x_zp, oy0, oy1, buf, yi) (a statement; buf: its thread's band slice) and
 * DW_JOB_ROWS(g, nt) (output rows per job for nt threads, default the band's) before including this, and no dw_band. The band holds
 * floats (exact integers) unless the set defines DW_ELEM first (int16_t: the Cortex-M DSP set's SMLAxy); the float
 * scratch of qconv.h then holds it with room to spare. A set may also define DW_CONVERT (a row of int8 minus x_zp
 * into the band) first. */
#ifndef BURNEDGE_QCONV_DW_NHWC_LOOPS_H
#define BURNEDGE_QCONV_DW_NHWC_LOOPS_H

#include "qconv.h"
#include "workers.h"

static int qthreads(int threads, double work, long jobs) {
    int nt = threads < BE_Q_MAX_THREADS ? threads : BE_Q_MAX_THREADS;
    if (work < 200000.0) nt = 1;
    if (nt > jobs) nt = (int)(jobs > 0 ? jobs : 1);
    return nt < 1 ? 1 : nt;
}

/* -- depthwise ----------------------------------------------------------------------------------------------- */
#define DP 4 /* output pixels per block */
#ifndef DW_ELEM
#define DW_ELEM float
#endif
#ifndef DW_CONVERT /* d[i] = s[i] - x_zp for i < n (a multiple of 8): a set may define a vector form first */
#define DW_CONVERT(d, s, n, x_zp) \
    for (long i_ = 0; i_ < (n); i_++) (d)[i_] = (DW_ELEM)((s)[i_] - (x_zp))
#endif

/* padded input rows iy0 .. iy0+rin-1 (padded coordinates) of image xi as DW_ELEM minus x_zp, [row][wp][c8] */
static void dw_fill(const int8_t *xi, int in_nhwc, const be_qconv_geo *g, long c8, long wp, long r0, long rin,
                    int32_t x_zp, DW_ELEM *buf) {
    const long C = g->C, hw = (long)g->H * g->W;
    for (long r = 0; r < rin; r++) {
        DW_ELEM *d = buf + r * wp * c8;
        const long iy = r0 + r - g->ph;
        if (iy < 0 || iy >= g->H) {
            memset(d, 0, (size_t)(wp * c8) * sizeof(DW_ELEM));
            continue;
        }
        const long lpad = g->pw < wp ? g->pw : wp;
        if (lpad > 0) memset(d, 0, (size_t)(lpad * c8) * sizeof(DW_ELEM));
        const long right = wp - g->pw - g->W;
        if (right > 0) memset(d + (g->pw + g->W) * c8, 0, (size_t)(right * c8) * sizeof(DW_ELEM));
        const long wn = g->W < wp - g->pw ? g->W : wp - g->pw;
        if (in_nhwc && C == c8) { /* whole 8-channel pixels: the row is one run */
            const int8_t *s = xi + iy * g->W * C;
            DW_ELEM *dp = d + g->pw * c8;
            DW_CONVERT(dp, s, wn * C, x_zp);
        } else if (in_nhwc) {
            const int8_t *s = xi + iy * g->W * C;
            for (long ix = 0; ix < wn; ix++) {
                DW_ELEM *dp = d + (g->pw + ix) * c8;
                const int8_t *sp = s + ix * C;
                for (long c = 0; c < C; c++) dp[c] = (DW_ELEM)(sp[c] - x_zp);
                for (long c = C; c < c8; c++) dp[c] = 0;
            }
        } else {
            for (long c = 0; c < C; c++) {
                const int8_t *s = xi + c * hw + iy * g->W;
                DW_ELEM *dp = d + g->pw * c8 + c;
                for (long ix = 0; ix < wn; ix++) dp[ix * c8] = (DW_ELEM)(s[ix] - x_zp);
            }
            if (c8 > C)
                for (long ix = 0; ix < wn; ix++)
                    for (long c = C; c < c8; c++) d[(g->pw + ix) * c8 + c] = 0;
        }
    }
}

#ifndef DW_RANGE
/* defined by the set's qconv_dw_nhwc.c, after this header: output rows oy0 .. oy1-1 of one image from its
 * filled band (padded row oy0*sh at buf row 0) */
static void dw_band(const DW_ELEM *buf, long wp, long c8, const be_qconv_geo *g, const long *off, const float *wf,
                    const be_qepi *e, long oy0, long oy1, int out_nhwc, int8_t *yi);
#endif

typedef struct {
    const int8_t *x;
    const float *wf;
    int8_t *y;
    const be_qepi *e;
    const be_qconv_geo *g;
    int flags;
    int32_t x_zp;
    float *scratch;
    const long *off;
    long brows, bands;
} qdw_nhwc_call;

/* jobs lo .. hi-1 (image n, band b of brows output rows) on thread tid's band buffer */
static void qdw_nhwc_jobs(void *ctx, int tid, long lo, long hi) {
    const qdw_nhwc_call *a = ctx;
    const int8_t *x = a->x;
    const float *wf = a->wf;
    int8_t *y = a->y;
    const be_qepi *e = a->e;
    const be_qconv_geo *g = a->g;
    const int flags = a->flags;
    const int32_t x_zp = a->x_zp;
    float *scratch = a->scratch;
    const long *off = a->off, brows = a->brows, bands = a->bands;
    const long C = g->C, c8 = (C + 7) / 8 * 8, hw = (long)g->H * g->W, ohw = (long)g->OH * g->OW;
    const long wp = be_qdw_nhwc_wp(g);
    /* every thread's slice is sized for the widest band the lowering reserved, whatever rows a job takes */
    DW_ELEM *buf = (DW_ELEM *)scratch + (long)tid * be_qdw_nhwc_slice(g, be_qdw_nhwc_band(g));
    for (long job = lo; job < hi; job++) {
        const long n = job / bands, b = job % bands;
        const long oy0 = b * brows, oy1 = oy0 + brows < g->OH ? oy0 + brows : g->OH;
        if (oy0 >= oy1) continue;
#ifdef DW_RANGE
        (void)off;
        (void)wp;
        DW_RANGE(x + n * C * hw, flags, g, c8, wp, wf, e, x_zp, oy0, oy1, buf, y + n * C * ohw);
#else
        const long rin = (oy1 - oy0 - 1) * g->sh + (long)(g->KH - 1) * g->dh + 1;
        const int8_t *xi = x + n * C * hw;
        dw_fill(xi, flags & 1, g, c8, wp, oy0 * g->sh, rin, x_zp, buf);
        dw_band(buf, wp, c8, g, off, wf, e, oy0, oy1, (flags & 2) != 0, y + n * C * ohw);
#endif
    }
}

void be_qdwconv_nhwc_i8(const int8_t *x, const float *wf, int8_t *y, const be_qepi *e, const be_qconv_geo *g,
                        int flags, int32_t x_zp, float *scratch, int threads) {
    const long C = g->C, c8 = (C + 7) / 8 * 8, ohw = (long)g->OH * g->OW;
    const long wp = be_qdw_nhwc_wp(g);
    const int taps = g->KH * g->KW;
    int nt = threads < BE_Q_MAX_THREADS ? threads : BE_Q_MAX_THREADS;
    if ((double)g->N * ohw * C * taps < 100000.0) nt = 1;
#ifndef DW_JOB_ROWS
#define DW_JOB_ROWS(g, nt) be_qdw_nhwc_band(g)
#endif
    const long brows = DW_JOB_ROWS(g, nt), bands = (g->OH + brows - 1) / brows, jobs = (long)g->N * bands;
    if (nt > jobs) nt = (int)jobs;
    if (nt < 1) nt = 1;
    long off[taps]; /* the taps' offsets (taps <= 512): sized to the kernel, a microcontroller's stack is small */
    for (int ky = 0; ky < g->KH; ky++)
        for (int kx = 0; kx < g->KW; kx++)
            off[ky * g->KW + kx] = ((long)ky * g->dh * wp + (long)kx * g->dw) * c8;
    qdw_nhwc_call a = {x, wf, y, e, g, flags, x_zp, scratch, off, brows, bands};
    be_parallel(nt, jobs, qdw_nhwc_jobs, &a);
}

#endif
