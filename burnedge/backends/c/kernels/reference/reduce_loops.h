/* Internal to the kernel sets: the loops of reduce.c (reference/reduce.c has the algorithm). A set's reduce.c
 * defines be__row_sum and be__row_max (a contiguous row's sum of pre(x), and its max or min with NaN) first. */
#ifndef BURNEDGE_REDUCE_LOOPS_H
#define BURNEDGE_REDUCE_LOOPS_H

#include "workers.h"
#include "burnedge.h"
#include "reduce.h"

#define BE_BLOCK 256

static inline float be__hsum8(const float *a) {
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

static float be__row_lse(const float *x, long stride, long n) {
    float m = -INFINITY;
    int nan = 0;
    for (long i = 0; i < n; i++) {
        float v = x[i * stride];
        nan |= v != v;
        m = v > m ? v : m;
    }
    if (nan) return NAN;
    if (!isfinite(m)) m = 0.0f;
    float s = 0.0f;
    for (long i = 0; i < n; i++) s += expf(x[i * stride] - m);
    return logf(s) + m;
}

static float be__row(const float *x, long n, int pre, int comb, int simd) {
    switch (comb) {
    case BE_RED_SUM: return be__row_sum(x, n, pre, simd);
    case BE_RED_MAX: return be__row_max(x, n, 0, simd);
    case BE_RED_MIN: return be__row_max(x, n, 1, simd);
    case BE_RED_LSE: return be__row_lse(x, 1, n);
    default: {
        float p = 1.0f;
        for (long i = 0; i < n; i++) p *= x[i];
        return p;
    }
    }
}

/* lanes [0, m) of y (stride 1) combined over n rows of x (row stride `inner`) */
static void be__lanes(const float *x, float *y, long n, long inner, long m, int pre, int comb) {
    if (comb == BE_RED_LSE) {
        for (long i = 0; i < m; i++) y[i] = be__row_lse(x + i, inner, n);
        return;
    }
    float id = comb == BE_RED_MAX ? -INFINITY : comb == BE_RED_MIN ? INFINITY : comb == BE_RED_PROD ? 1.0f : 0.0f;
    for (long i = 0; i < m; i++) y[i] = id;
    for (long r = 0; r < n; r++) {
        const float *xr = x + r * inner;
        switch (comb) {
        case BE_RED_SUM:
            if (pre == BE_PRE_SQUARE)
                for (long i = 0; i < m; i++) y[i] += xr[i] * xr[i];
            else if (pre == BE_PRE_ABS)
                for (long i = 0; i < m; i++) y[i] += fabsf(xr[i]);
            else
                for (long i = 0; i < m; i++) y[i] += xr[i];
            break;
        case BE_RED_MAX:
            for (long i = 0; i < m; i++) y[i] = (xr[i] > y[i] || xr[i] != xr[i]) ? xr[i] : y[i];
            break;
        case BE_RED_MIN:
            for (long i = 0; i < m; i++) y[i] = (xr[i] < y[i] || xr[i] != xr[i]) ? xr[i] : y[i];
            break;
        default:
            for (long i = 0; i < m; i++) y[i] *= xr[i];
        }
    }
}

static inline float be__post(float v, int post, float divisor) {
    switch (post) {
    case BE_POST_SQRT: return sqrtf(v);
    case BE_POST_LOG: return logf(v);
    case BE_POST_DIV: return v / divisor;
    default: return v;
    }
}

typedef struct {
    const float *x;
    float *y;
    long n, inner, blocks;
    int pre, comb, post, simd;
    float divisor;
} be__reduce_call;

static void be__reduce_rows(void *ctx, int tid, long lo, long hi) {
    const be__reduce_call *c = ctx;
    (void)tid;
    for (long o = lo; o < hi; o++)
        c->y[o] = be__post(be__row(c->x + o * c->n, c->n, c->pre, c->comb, c->simd), c->post, c->divisor);
}

static void be__reduce_blocks(void *ctx, int tid, long lo, long hi) {
    const be__reduce_call *c = ctx;
    const float *x = c->x;
    float *y = c->y;
    const long n = c->n, inner = c->inner, blocks = c->blocks;
    const int pre = c->pre, comb = c->comb, post = c->post;
    const float divisor = c->divisor;
    (void)tid;
    for (long t = lo; t < hi; t++) {
        long o = t / blocks, b0 = (t % blocks) * BE_BLOCK;
        long m = inner - b0 < BE_BLOCK ? inner - b0 : BE_BLOCK;
        float *yb = y + o * inner + b0;
        be__lanes(x + o * n * inner + b0, yb, n, inner, m, pre, comb);
        if (post != BE_POST_NONE)
            for (long i = 0; i < m; i++) yb[i] = be__post(yb[i], post, divisor);
    }
}

static void be__reduce_f32(const float *x, float *y, long outer, long n, long inner, int pre, int comb, int post,
                           float divisor, int threads, int simd) {
    be__reduce_call c = {x, y, n, inner, 0, pre, comb, post, simd, divisor};
    if (inner == 1) {
        be_parallel(outer * n > 32768 ? threads : 1, outer, be__reduce_rows, &c);
        return;
    }
    c.blocks = (inner + BE_BLOCK - 1) / BE_BLOCK;
    be_parallel(outer * n * inner > 32768 ? threads : 1, outer * c.blocks, be__reduce_blocks, &c);
}

void be_reduce_f32(const float *x, float *y, long outer, long n, long inner, int pre, int comb, int post,
                   float divisor, int threads) {
    be__reduce_f32(x, y, outer, n, inner, pre, comb, post, divisor, threads, 1);
}

void be_reduce_f32_portable(const float *x, float *y, long outer, long n, long inner, int pre, int comb, int post,
                            float divisor, int threads) {
    be__reduce_f32(x, y, outer, n, inner, pre, comb, post, divisor, threads, 0);
}

#endif
