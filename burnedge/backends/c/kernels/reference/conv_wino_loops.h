/* Internal to the kernel sets: the loops of conv_wino.c (reference/conv_wino.c has the algorithm). A set's
 * conv_wino.c defines the statement hooks WINO_IN_VEC, WINO_OUT_VEC, WINO_LOCALS, WINO_PANEL_VEC and
 * WINO_PRODUCT_VEC (its vector paths, over the locals where they stand; empty: the portable code) first; they
 * stand without a semicolon (WINO_OUT_VEC ends in `else`). */
#ifndef BURNEDGE_CONV_WINO_LOOPS_H
#define BURNEDGE_CONV_WINO_LOOPS_H

#include "workers.h"
#include "conv.h"

#ifndef WINO_PAIR_VEC /* a set's two-panel product (x86 AVX-512), before WINO_PANEL_VEC; none: panel by panel */
#define WINO_PAIR_VEC()
#endif

/* V = B^T d B of 8 channels: d[i*4 + j] the patch rows i, columns j; v[xi] with xi = i*4 + j */
#define WINO_IN(T, ADD, SUB)                                                                                         \
    do {                                                                                                             \
        T t[16];                                                                                                     \
        for (int j = 0; j < 4; j++) {                                                                                \
            t[0 + j] = SUB(d[0 + j], d[8 + j]);                                                                      \
            t[4 + j] = ADD(d[4 + j], d[8 + j]);                                                                      \
            t[8 + j] = SUB(d[8 + j], d[4 + j]);                                                                      \
            t[12 + j] = SUB(d[4 + j], d[12 + j]);                                                                    \
        }                                                                                                            \
        for (int i = 0; i < 4; i++) {                                                                                \
            v[i * 4 + 0] = SUB(t[i * 4 + 0], t[i * 4 + 2]);                                                          \
            v[i * 4 + 1] = ADD(t[i * 4 + 1], t[i * 4 + 2]);                                                          \
            v[i * 4 + 2] = SUB(t[i * 4 + 2], t[i * 4 + 1]);                                                          \
            v[i * 4 + 3] = SUB(t[i * 4 + 1], t[i * 4 + 3]);                                                          \
        }                                                                                                            \
    } while (0)

/* Y = A^T m A: y[a*2 + b] for the 2x2 block */
#define WINO_OUT(T, ADD, SUB)                                                                                        \
    do {                                                                                                             \
        T s0[4], s1[4];                                                                                              \
        for (int j = 0; j < 4; j++) {                                                                                \
            s0[j] = ADD(ADD(m[j], m[4 + j]), m[8 + j]);                                                              \
            s1[j] = SUB(SUB(m[4 + j], m[8 + j]), m[12 + j]);                                                         \
        }                                                                                                            \
        y[0] = ADD(ADD(s0[0], s0[1]), s0[2]);                                                                        \
        y[1] = SUB(SUB(s0[1], s0[2]), s0[3]);                                                                        \
        y[2] = ADD(ADD(s1[0], s1[1]), s1[2]);                                                                        \
        y[3] = SUB(SUB(s1[1], s1[2]), s1[3]);                                                                        \
    } while (0)

#define F_ADD(a, b) ((a) + (b))
#define F_SUB(a, b) ((a) - (b))

typedef struct {
    const float *xp, *upack;
    float *y, *slices, *vall; /* vall: every row panel's V when shared (be_conv_wino_shared), else unused */
    const be_epi *e;
    const be_conv_geo *g;
    long C, M, np, tx, tiles, mp, jobs, wp, hp, slice;
    int out_nhwc, portable;
} wino_call;

/* the 6 (mr) patches of panel p of image n into v (16 x 6 x C) */
static void transform_in(const wino_call *w, const float *xi, long p, int mr, float *vb) {
    const long C = w->C, wp = w->wp;
    for (int r = 0; r < mr; r++) {
        const long t = p * BE_MR + r, ty = t / w->tx, tx = t % w->tx;
        const float *base = xi + (2 * ty * wp + 2 * tx) * C;
        for (long c = 0; c < C; c += 8) {
            WINO_IN_VEC()
            for (int l = 0; l < 8; l++) {
                float d[16], v[16];
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++) d[i * 4 + j] = base[(i * wp + j) * C + c + l];
                WINO_IN(float, F_ADD, F_SUB);
                for (int xi_ = 0; xi_ < 16; xi_++) vb[(xi_ * BE_MR + r) * C + c + l] = v[xi_];
            }
        }
    }
}

/* the output blocks of panel p, channels jc .. jc+nr-1, from mb (16 x 6 x 16 raw products) */
static void transform_out(const wino_call *w, const be_epi *ep, float *yi, long p, int mr, long jc, int nr,
                          const float *mb) {
    const be_conv_geo *g = w->g;
    const long M = w->M, ohw = (long)g->OH * g->OW;
    for (int r = 0; r < mr; r++) {
        const long t = p * BE_MR + r, ty = t / w->tx, tx = t % w->tx;
        for (int h = 0; h < nr; h += 8) {
            const int n = nr - h < 8 ? nr - h : 8;
            float ys[4][8];
            WINO_OUT_VEC()
            {
                for (int l = 0; l < n; l++) {
                    float m[16], y[4];
                    for (int xi_ = 0; xi_ < 16; xi_++) m[xi_] = mb[(xi_ * BE_MR + r) * BE_NR + h + l];
                    WINO_OUT(float, F_ADD, F_SUB);
                    for (int a = 0; a < 2; a++)
                        for (int b = 0; b < 2; b++) {
                            const long oy = 2 * ty + a, ox = 2 * tx + b, pix = oy * g->OW + ox;
                            if (oy >= g->OH || ox >= g->OW) continue;
                            const float v = be_epi_apply(ep, y[a * 2 + b], pix, jc + h + l);
                            if (w->out_nhwc)
                                yi[pix * M + jc + h + l] = v;
                            else
                                ys[a * 2 + b][l] = v;
                        }
                }
            }
            if (!w->out_nhwc)
                for (int a = 0; a < 2; a++)
                    for (int b = 0; b < 2; b++) {
                        const long oy = 2 * ty + a, ox = 2 * tx + b;
                        if (oy >= g->OH || ox >= g->OW) continue;
                        for (int l = 0; l < n; l++) yi[(jc + h + l) * ohw + oy * g->OW + ox] = ys[a * 2 + b][l];
                    }
        }
    }
}

/* patches in row panel p (the last one may hold fewer than BE_MR) */
static inline int wino_rows_in(const wino_call *w, long p) {
    return (int)(w->tiles - p * BE_MR < BE_MR ? w->tiles - p * BE_MR : BE_MR);
}

/* the products of row panel p of image n (its patches transformed in vb) with column panels q0 .. q1-1, each
 * followed by its output transform and epilogue; mb: 2 x 16 x 6 x 16 floats of the thread's (two panels' products) */
static inline __attribute__((always_inline)) void wino_panels(const wino_call *w, float *vb, float *mb, long n, long p,
                                                              long q0, long q1) {
    const be_conv_geo *g = w->g;
    const long C = w->C, ohw = (long)g->OH * g->OW;
    const int mr = wino_rows_in(w, p);
    WINO_LOCALS()
    be_epi ep = *w->e;
    if (ep.add1) ep.add1 += n * w->M * ohw;
    float *yi = w->y + n * w->M * ohw;
    for (long q = q0; q < q1; q++) {
        const long jc = q * BE_NR;
        const int nr = (int)(w->M - jc < BE_NR ? w->M - jc : BE_NR);
        WINO_PAIR_VEC()
        WINO_PANEL_VEC()
        for (int xi_ = 0; xi_ < 16; xi_++) {
            const float *a = vb + xi_ * BE_MR * C, *b = w->upack + (xi_ * w->np + q) * BE_NR * C;
            const float *base[8] = {a, a + C, a + 2 * C, a + 3 * C, a + 4 * C, a + 5 * C, a, a};
            WINO_PRODUCT_VEC()
            for (int r = 0; r < mr; r++) /* portable: row by row, k the identity */
                for (int j = 0; j < BE_NR; j++) {
                    float acc = 0.0f;
                    for (long k = 0; k < C; k++) acc += base[r][k] * b[k * BE_NR + j];
                    mb[(xi_ * BE_MR + r) * BE_NR + j] = acc;
                }
        }
        transform_out(w, &ep, yi, p, mr, jc, nr, mb);
    }
}

/* a job per row panel: its patches transformed into the thread's slice, then every column panel */
static void wino_jobs(void *ctx, int t, long lo, long hi) {
    const wino_call *w = ctx;
    float *vb = w->slices + t * w->slice, *mb = vb + 16 * BE_MR * w->C;
    for (long job = lo; job < hi; job++) {
        const long n = job / w->mp, p = job % w->mp;
        transform_in(w, w->xp + n * w->hp * w->wp * w->C, p, wino_rows_in(w, p), vb);
        wino_panels(w, vb, mb, n, p, 0, w->np);
    }
}

/* shared V, step 1: row panel `job` of the batch transformed into its place in vall */
static void wino_in_jobs(void *ctx, int t, long lo, long hi) {
    const wino_call *w = ctx;
    (void)t;
    for (long job = lo; job < hi; job++) {
        const long n = job / w->mp, p = job % w->mp;
        transform_in(w, w->xp + n * w->hp * w->wp * w->C, p, wino_rows_in(w, p), w->vall + job * 16 * BE_MR * w->C);
    }
}

/* shared V, step 2: a job per (image, pair of column panels, row panel), row panels fastest: the jobs a thread
 * takes in a row mostly share one pair, whose 32 weight matrices stay in its cache */
static void wino_shared_jobs(void *ctx, int t, long lo, long hi) {
    const wino_call *w = ctx;
    const long pairs = (w->np + 1) / 2;
    float *mb = w->slices + t * 32 * BE_MR * BE_NR;
    for (long job = lo; job < hi; job++) {
        const long p = job % w->mp, q = job / w->mp % pairs * 2, n = job / w->mp / pairs;
        wino_panels(w, w->vall + (n * w->mp + p) * 16 * BE_MR * w->C, mb, n, p, q, q + 2 < w->np ? q + 2 : w->np);
    }
}

static void wino(const float *x, const float *upack, float *y, const be_epi *e, const be_conv_geo *g, int flags,
                 float *scratch, int threads, int portable) {
    wino_call w = {.upack = upack, .y = y, .e = e, .g = g, .C = g->C, .M = g->M, .portable = portable};
    w.out_nhwc = (flags & BE_OUT_NHWC) != 0;
    w.np = (w.M + BE_NR - 1) / BE_NR, w.tx = (g->OW + 1) / 2, w.tiles = w.tx * ((g->OH + 1) / 2);
    w.mp = (w.tiles + BE_MR - 1) / BE_MR, w.jobs = (long)g->N * w.mp;
    w.hp = be_conv_wino_hp(g), w.wp = be_conv_wino_wp(g), w.slice = be_conv_wino_slice(g);
    const long img = w.hp * w.wp * w.C;
    be_nhwc_pad_images(x, flags & BE_IN_NHWC, g, w.hp, w.wp, scratch, threads);
    w.xp = scratch, w.slices = scratch + (g->N * img + 15) / 16 * 16;
    const int nt = threads < BE_DENSE_MAX_THREADS ? threads : BE_DENSE_MAX_THREADS;
    if (be_conv_wino_shared(g)) {
        w.vall = w.slices, w.slices = w.vall + be_conv_wino_vall(g);
        be_parallel(nt, w.jobs, wino_in_jobs, &w);
        be_parallel(nt, w.jobs * ((w.np + 1) / 2), wino_shared_jobs, &w);
    } else {
        be_parallel(nt, w.jobs, wino_jobs, &w);
    }
}

void be_conv_wino_f32(const float *x, const float *upack, float *y, const be_epi *e, const be_conv_geo *g, int flags,
                      float *scratch, int threads) {
    wino(x, upack, y, e, g, flags, scratch, threads, 0);
}

void be_conv_wino_f32_portable(const float *x, const float *upack, float *y, const be_epi *e, const be_conv_geo *g,
                               int flags, float *scratch, int threads) {
    wino(x, upack, y, e, g, flags, scratch, threads, 1);
}

#endif
