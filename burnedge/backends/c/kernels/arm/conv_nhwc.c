/* Channels-last (NHWC) convolution as an implicit GEMM: rows = output pixels, columns = output channels.
 *
 * Why: on small planes (7x7 .. 32x32) an NCHW conv has few output positions per row of the product and many
 * partial 16-wide column panels; in NHWC every pixel is a row of C contiguous floats, the out channels fill the
 * 16-wide panels of the weights, and with the input zero-padded once no im2col is needed at all.
 *
 * Algorithm, per call (one group; the weights are (KH*KW*C) x M, k ordered (ky, kx, c), in B panels):
 *  1. unless the input is NHWC and needs no padding, it is copied once into scratch as a zero-padded NHWC image
 *     (Hp x Wp x C per image; an NCHW input is transposed on the way); then input k of output pixel (oy, ox)
 *     sits at base(oy, ox) + koff[k], with base = ((oy*sh)*Wp + ox*sw)*C and koff[k] = (ky*dh*Wp + kx*dw)*C + c
 *     (a table of K offsets made once per call);
 *  2. output pixels are cut into row panels of MR = 6 (8 when M <= 8: an 8x8 tile instead of a half-empty 6x16
 *     one); a job is one row panel and a range of column panels (all of them unless threads need more jobs), or,
 *     on small planes, one column panel, the jobs going panel by panel (a weight panel meets every row panel
 *     while in cache);
 *  3. the micro-kernel (conv_tile.h: AVX2, NEON or portable) runs the full K loop: per k the weight vectors and
 *     one broadcast per pixel from its base + koff[k]; a full panel on one output row addresses its pixels from
 *     one base and a stride, a 1x1 conv read in place needs no koff at all; every output is one dot product in k
 *     order, whatever the thread count (1x1 convs read in place and written NHWC go through run_lin, a lean
 *     out-of-line job loop);
 *  4. the epilogue is applied in registers: the accumulators start from the bias, then the NHWC residual and the
 *     common activations resolved at compile time, anything else through be_epi8_store; an NCHW output goes
 *     through a small buffer, stored transposed.
 * No parallel region is entered with one thread (an inactive one still costs a few hundred ns per call).
 */
#include "conv.h"
#include "arm_conv_tile.h"

/* row iy of an NCHW image as NHWC pixels: d[ix*C + c] = s[c*hw + ix] */
static void transpose_row(const float *s, long hw, long C, long W, float *d) {
    for (long x0 = 0; x0 < W; x0 += 16) { /* 16 pixels at a time, the channels scattered into them */
        const long x1 = x0 + 16 < W ? x0 + 16 : W;
        for (long c = 0; c < C; c++)
            for (long ix = x0; ix < x1; ix++) d[ix * C + c] = s[c * hw + ix];
    }
}

void be_nhwc_pad_image(const float *xi, int in_nhwc, const be_conv_geo *g, long hp, long wp, float *xp) {
    const long C = g->C, hw = (long)g->H * g->W;
    for (long r = 0; r < hp; r++) {
        float *d = xp + r * wp * C;
        const long iy = r - g->ph;
        if (iy < 0 || iy >= g->H) {
            memset(d, 0, (size_t)(wp * C) * sizeof(float));
            continue;
        }
        memset(d, 0, (size_t)g->pw * C * sizeof(float));
        memset(d + ((long)g->pw + g->W) * C, 0, (size_t)(wp - g->pw - g->W) * C * sizeof(float));
        if (in_nhwc || C == 1)
            memcpy(d + (long)g->pw * C, xi + iy * g->W * C, (size_t)g->W * C * sizeof(float));
        else
            transpose_row(xi + iy * g->W, hw, C, g->W, d + (long)g->pw * C);
    }
}


typedef struct {
    const float *xp, *wpack;
    const int *koff; /* input offsets of k from a pixel's base */
    float *y, *slices;
    long K, M, ohw, hp, wp, slice, mp, np, ncb, jobs;
    int out_nhwc, rows; /* rows: pixels per row panel, BE_MR, or 8 with the 8x8 tile */
    int pmajor;         /* small planes: one column panel per job, jobs ordered panel by panel */
} conv_job;

/* jobs j0 .. j1-1 of one thread; act: the compile-time activation (-1: generic epilogue, -2: portable); LIN: a 1x1
 * conv read in place (koff the identity, pixel p at p*C) */
static inline __attribute__((always_inline)) void run_jobs(const conv_job *q, const be_conv_geo *g, const be_epi *e,
                                                           int t, long j0, long j1, const int act, const int LIN) {
    float *tbuf = q->slices + t * q->slice;
    /* (image, row panel, column block) of job j0 and the output position of the panel's first pixel, then
     * counted forward (no divisions per job); pmajor: jobs go column panel by column panel */
    long cb = j0 % q->ncb, p = j0 / q->ncb % q->mp, n = j0 / q->ncb / q->mp;
    if (q->pmajor) p = j0 % q->mp, cb = j0 / q->mp % q->ncb, n = j0 / q->mp / q->ncb;
    const int R = q->rows;
    long py = p * R / g->OW, px = p * R % g->OW;
    for (long job = j0; job < j1; job++) {
        const long i0 = p * R;
        const long qa = q->ncb == 1 ? 0 : q->np * cb / q->ncb, qb = q->ncb == 1 ? q->np : q->np * (cb + 1) / q->ncb;
        const int mr = (int)(q->ohw - i0 < R ? q->ohw - i0 : R);
        const float *xi = q->xp + n * q->hp * q->wp * g->C, *base[8];
        const int *koff = q->koff;
        for (long r = 0, oy = py, ox = px; r < mr; r++) {
            base[r] = xi + (oy * g->sh * q->wp + ox * g->sw) * g->C;
            if (++ox == g->OW) ox = 0, oy++;
        }
        /* a full panel whose pixels are evenly spaced in the input: on one output row, or any 1x1 read in place */
        const int full = mr == R && (LIN || px + R <= g->OW);
        const long st = (long)g->sw * g->C;
        (void)full, (void)st; /* unused in the portable build */
        be_epi ep = *e;
        if (ep.add1) ep.add1 += n * q->M * q->ohw;
        float *yi = q->y + n * q->M * q->ohw;
        for (long qq = qa; qq < qb; qq++) {
            const long jc = qq * BE_NR;
            const int nr = (int)(q->M - jc < BE_NR ? q->M - jc : BE_NR);
            const float *b = q->wpack + qq * BE_NR * q->K;
            float *c = q->out_nhwc ? yi + i0 * q->M + jc : tbuf;
            const long ldc = q->out_nhwc ? q->M : BE_NR;
            if (act != -2 && R == 8 && full)
                tile_neon(q->K, koff, base, mr, b, nr, c, ldc, &ep, i0, jc, act, st, LIN ? 2 : 1, 8);
            else if (act != -2 && R == 8)
                tile_neon(q->K, koff, base, mr, b, nr, c, ldc, &ep, i0, jc, act, st, 0, 8);
            else if (act != -2 && full)
                tile_neon(q->K, koff, base, mr, b, nr, c, ldc, &ep, i0, jc, act, st, LIN ? 2 : 1, BE_MR);
            else if (act != -2)
                tile_neon(q->K, koff, base, mr, b, nr, c, ldc, &ep, i0, jc, act, st, 0, BE_MR);
            else
                tile_portable(q->K, koff, base, mr, b, nr, c, ldc, &ep, i0, jc);
            if (!q->out_nhwc)
                for (int j = 0; j < nr; j++)
                    for (int r = 0; r < mr; r++) yi[(jc + j) * q->ohw + i0 + r] = tbuf[r * BE_NR + j];
        }
        if (q->pmajor) {
            if (++p < q->mp) {
                for (px += R; px >= g->OW;) px -= g->OW, py++;
            } else {
                p = 0, py = 0, px = 0;
                if (++cb == q->ncb) cb = 0, n++;
            }
        } else if (++cb == q->ncb) {
            cb = 0;
            if (++p == q->mp)
                p = 0, n++, py = 0, px = 0;
            else
                for (px += R; px >= g->OW;) px -= g->OW, py++;
        }
    }
}


static void run_act(const conv_job *q, const be_conv_geo *g, const be_epi *e, int t, long j0, long j1, int act,
                    const int LIN) {
    switch (act) {
    case -2: run_jobs(q, g, e, t, j0, j1, -2, 0); break;
    case BE_ACT_NONE: run_jobs(q, g, e, t, j0, j1, BE_ACT_NONE, LIN); break;
    case BE_ACT_RELU: run_jobs(q, g, e, t, j0, j1, BE_ACT_RELU, LIN); break;
    case BE_ACT_CLIP: run_jobs(q, g, e, t, j0, j1, BE_ACT_CLIP, LIN); break;
    default: run_jobs(q, g, e, t, j0, j1, -1, LIN); break;
    }
}

void be_conv_nhwc_jobs_neon(const conv_job *q, const be_conv_geo *g, const be_epi *e, int t, long j0, long j1, int act);
#define run_any be_conv_nhwc_jobs_neon /* a symbol of its own: the ARM kernel archives show it */
void run_any(const conv_job *q, const be_conv_geo *g, const be_epi *e, int t, long j0, long j1, int act) {
    const int lin = g->KH == 1 && g->KW == 1 && q->hp == g->OH && q->wp == g->OW && g->sh == 1 && g->sw == 1;
    if (lin)
        run_act(q, g, e, t, j0, j1, act, 1);
    else
        run_act(q, g, e, t, j0, j1, act, 0);
}

static void conv_nhwc(const float *x, const float *wpack, float *y, const be_epi *e, const be_conv_geo *g, int flags,
                      float *scratch, int threads, int portable) {
    conv_job q;
    q.K = (long)g->C * g->KH * g->KW, q.M = g->M, q.ohw = (long)g->OH * g->OW;
    q.hp = be_conv_nhwc_hp(g), q.wp = be_conv_nhwc_wp(g), q.out_nhwc = (flags & BE_OUT_NHWC) != 0;
    q.wpack = wpack, q.y = y;
    float *s = scratch;
    if (be_conv_nhwc_padded(g, flags)) {
        const long img = q.hp * q.wp * g->C, chw = (long)g->C * g->H * g->W;
        for (int n = 0; n < g->N; n++) be_nhwc_pad_image(x + n * chw, flags & BE_IN_NHWC, g, q.hp, q.wp, s + n * img);
        q.xp = s;
        s += (g->N * img + 15) / 16 * 16;
    } else {
        q.xp = x;
    }
    int *koff = (int *)s;
    for (int ky = 0, k = 0; ky < g->KH; ky++)
        for (int kx = 0; kx < g->KW; kx++) {
            const long tap = ((long)ky * g->dh * q.wp + (long)kx * g->dw) * g->C;
            for (int c = 0; c < g->C; c++, k++) koff[k] = (int)(tap + c);
        }
    q.koff = koff, q.slices = s + (q.K + 15) / 16 * 16, q.slice = 8 * BE_NR;
    q.rows = q.M <= 8 ? 8 : BE_MR;
    q.mp = (q.ohw + q.rows - 1) / q.rows, q.np = (q.M + BE_NR - 1) / BE_NR;
    int nt = threads < BE_DENSE_MAX_THREADS ? threads : BE_DENSE_MAX_THREADS;
    if ((double)g->N * q.ohw * q.M * q.K < 200000.0) nt = 1;
    /* jobs: (image, row panel, block of column panels); blocks only when row panels cannot feed the threads */
    q.ncb = 1, q.pmajor = q.mp <= 16 && q.np > 1;
    if (q.pmajor) /* a weight panel meets every row panel while it is in L1 */
        q.ncb = q.np;
    else if (nt > 1 && g->N * q.mp < 4 * nt)
        q.ncb = q.np < nt ? q.np : nt;
    q.jobs = g->N * q.mp * q.ncb;
    if (nt > q.jobs) nt = (int)q.jobs;
    /* the fast epilogue: alpha = beta = 1, a per-column bias, an NHWC residual, a vector activation */
    const int fast = e->alpha == 1.0f && (!e->add0 || (e->beta0 == 1.0f && e->rs0 == 0 && e->cs0 == 1)) &&
                     (!e->add1 || (e->rs1 == q.M && e->cs1 == 1)) && e->act <= BE_ACT_CLIP;
    const int act = portable ? -2 : fast ? e->act : -1;
    if (nt == 1) { /* no parallel region at all: even an inactive one costs a few hundred ns */
        run_any(&q, g, e, 0, 0, q.jobs, act);
        return;
    }
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; t++) run_any(&q, g, e, t, q.jobs * t / nt, q.jobs * (t + 1) / nt, act);
}

void be_conv_nhwc_f32(const float *x, const float *wpack, float *y, const be_epi *e, const be_conv_geo *g, int flags,
                      float *scratch, int threads) {
    conv_nhwc(x, wpack, y, e, g, flags, scratch, threads, 0);
}

void be_conv_nhwc_f32_portable(const float *x, const float *wpack, float *y, const be_epi *e, const be_conv_geo *g,
                               int flags, float *scratch, int threads) {
    conv_nhwc(x, wpack, y, e, g, flags, scratch, threads, 1);
}
