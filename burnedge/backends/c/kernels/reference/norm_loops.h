/* Internal to the kernel sets: the loops of norm.c (reference/norm.c has the algorithm). A set's norm.c includes
 * this, then defines be__sum, be__sqdev (a row's sum, and its sum of squared deviations from m) and
 * be__softmax_row (the softmax of one contiguous row). */
#ifndef BURNEDGE_NORM_LOOPS_H
#define BURNEDGE_NORM_LOOPS_H

#include "workers.h"
#include "burnedge.h"
#include "norm.h"

#define BE_LANES 256

/* -- Softmax --------------------------------------------------------------------------------------------------- */

/* defined by the set's norm.c, after this header */
static float be__sum(const float *x, long n, int simd);
static float be__sqdev(const float *x, long n, float m, int simd);
static void be__softmax_row(const float *x, float *y, long n, int log_, int simd);

/* lanes [0, w) of a strided softmax (row stride `inner`) */
static void be__softmax_lanes(const float *x, float *y, long n, long inner, long w, int log_) {
    float m[BE_LANES], s[BE_LANES];
    for (long i = 0; i < w; i++) m[i] = -INFINITY, s[i] = 0.0f;
    for (long r = 0; r < n; r++)
        for (long i = 0; i < w; i++) m[i] = x[r * inner + i] > m[i] ? x[r * inner + i] : m[i];
    for (long r = 0; r < n; r++)
        for (long i = 0; i < w; i++) {
            float e = expf(x[r * inner + i] - m[i]);
            if (!log_) y[r * inner + i] = e;
            s[i] += e;
        }
    for (long i = 0; i < w; i++) s[i] = log_ ? logf(s[i]) : 1.0f / s[i];
    for (long r = 0; r < n; r++)
        for (long i = 0; i < w; i++) {
            long at = r * inner + i;
            y[at] = log_ ? (x[at] - m[i]) - s[i] : y[at] * s[i];
        }
}

/* a normalisation's arguments, for the rows (or lane blocks, groups) [lo, hi) a task of the worker pool runs */
typedef struct {
    const float *x, *scale, *bias;
    float *y, *mean, *inv_std;
    long n, inner, blocks, d, groups, cpg, size;
    float eps;
    int log_, simd;
} be__norm_call;

static void be__softmax_rows(void *ctx, int tid, long lo, long hi) {
    const be__norm_call *c = ctx;
    (void)tid;
    for (long o = lo; o < hi; o++) be__softmax_row(c->x + o * c->n, c->y + o * c->n, c->n, c->log_, c->simd);
}

static void be__softmax_blocks(void *ctx, int tid, long lo, long hi) {
    const be__norm_call *c = ctx;
    const long n = c->n, inner = c->inner, blocks = c->blocks;
    (void)tid;
    for (long t = lo; t < hi; t++) {
        long o = t / blocks, b0 = (t % blocks) * BE_LANES;
        long w = inner - b0 < BE_LANES ? inner - b0 : BE_LANES;
        be__softmax_lanes(c->x + o * n * inner + b0, c->y + o * n * inner + b0, n, inner, w, c->log_);
    }
}

static void be__softmax(const float *x, float *y, long outer, long n, long inner, int log_, int threads, int simd) {
    be__norm_call c = {.x = x, .y = y, .n = n, .inner = inner, .log_ = log_, .simd = simd};
    if (inner == 1) {
        be_parallel(outer * n > 16384 ? threads : 1, outer, be__softmax_rows, &c);
        return;
    }
    c.blocks = (inner + BE_LANES - 1) / BE_LANES;
    be_parallel(outer * n * inner > 16384 ? threads : 1, outer * c.blocks, be__softmax_blocks, &c);
}

void be_softmax_f32(const float *x, float *y, long outer, long n, long inner, int log_, int threads) {
    be__softmax(x, y, outer, n, inner, log_, threads, 1);
}

void be_softmax_f32_portable(const float *x, float *y, long outer, long n, long inner, int log_, int threads) {
    be__softmax(x, y, outer, n, inner, log_, threads, 0);
}

/* -- LayerNorm / GroupNorm ------------------------------------------------------------------------------------- */
static void be__layernorm_rows(void *ctx, int tid, long lo, long hi) {
    const be__norm_call *c = ctx;
    const float *x = c->x, *scale = c->scale, *bias = c->bias;
    float *y = c->y, *mean = c->mean, *inv_std = c->inv_std;
    const long d = c->d;
    const float eps = c->eps;
    const int simd = c->simd;
    (void)tid;
    for (long r = lo; r < hi; r++) {
        const float *xr = x + r * d;
        float *yr = y + r * d;
        float m = be__sum(xr, d, simd) / (float)d;
        float inv = 1.0f / sqrtf(be__sqdev(xr, d, m, simd) / (float)d + eps);
        if (bias)
            for (long i = 0; i < d; i++) yr[i] = ((xr[i] - m) * inv) * scale[i] + bias[i];
        else
            for (long i = 0; i < d; i++) yr[i] = ((xr[i] - m) * inv) * scale[i];
        if (mean) mean[r] = m;
        if (inv_std) inv_std[r] = inv;
    }
}

static void be__layernorm(const float *x, float *y, const float *scale, const float *bias, float *mean,
                          float *inv_std, long rows, long d, float eps, int threads, int simd) {
    be__norm_call c = {.x = x, .scale = scale, .bias = bias, .y = y, .mean = mean, .inv_std = inv_std, .d = d,
                       .eps = eps, .simd = simd};
    be_parallel(rows * d > 16384 ? threads : 1, rows, be__layernorm_rows, &c);
}

void be_layernorm_f32(const float *x, float *y, const float *scale, const float *bias, float *mean, float *inv_std,
                      long rows, long d, float eps, int threads) {
    be__layernorm(x, y, scale, bias, mean, inv_std, rows, d, eps, threads, 1);
}

void be_layernorm_f32_portable(const float *x, float *y, const float *scale, const float *bias, float *mean,
                               float *inv_std, long rows, long d, float eps, int threads) {
    be__layernorm(x, y, scale, bias, mean, inv_std, rows, d, eps, threads, 0);
}

static void be__groupnorm_groups(void *ctx, int tid, long lo, long hi) {
    const be__norm_call *g = ctx;
    const float *x = g->x, *scale = g->scale, *bias = g->bias;
    float *y = g->y;
    const long groups = g->groups, cpg = g->cpg, size = g->size, len = cpg * size;
    const float eps = g->eps;
    const int simd = g->simd;
    (void)tid;
    for (long t = lo; t < hi; t++) {
        const float *xg = x + t * len;
        float *yg = y + t * len;
        float m = be__sum(xg, len, simd) / (float)len;
        float inv = 1.0f / sqrtf(be__sqdev(xg, len, m, simd) / (float)len + eps);
        for (long c = 0; c < cpg; c++) {
            long ch = (t % groups) * cpg + c;
            float s = scale[ch], b = bias[ch];
            const float *xc = xg + c * size;
            float *yc = yg + c * size;
            for (long i = 0; i < size; i++) yc[i] = ((xc[i] - m) * inv) * s + b;
        }
    }
}

static void be__groupnorm(const float *x, float *y, const float *scale, const float *bias, long n, long groups,
                          long cpg, long size, float eps, int threads, int simd) {
    be__norm_call c = {.x = x, .scale = scale, .bias = bias, .y = y, .groups = groups, .cpg = cpg, .size = size,
                       .eps = eps, .simd = simd};
    be_parallel(n * groups * cpg * size > 16384 ? threads : 1, n * groups, be__groupnorm_groups, &c);
}

void be_groupnorm_f32(const float *x, float *y, const float *scale, const float *bias, long n, long groups,
                      long cpg, long size, float eps, int threads) {
    be__groupnorm(x, y, scale, bias, n, groups, cpg, size, eps, threads, 1);
}

void be_groupnorm_f32_portable(const float *x, float *y, const float *scale, const float *bias, long n,
                               long groups, long cpg, long size, float eps, int threads) {
    be__groupnorm(x, y, scale, bias, n, groups, cpg, size, eps, threads, 0);
}

#endif
