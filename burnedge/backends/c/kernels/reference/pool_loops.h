/* Internal to the kernel sets: the loops of pool.c (reference/pool.c has the algorithm). A set's pool.c includes
 * this, then defines be__horiz_f32 (step 2 of a float max/avg row: horizontal max or sum over the row buffer),
 * be__plane_sum and be__plane_max (a global pool's plane). */
#ifndef BURNEDGE_POOL_LOOPS_H
#define BURNEDGE_POOL_LOOPS_H

#include "burnedge.h"
#include "pool.h"
#include "workers.h"

#ifndef BE_POOL_ROW
#define BE_POOL_ROW 1024 /* widest padded row the buffered path takes (two such arrays live on the stack) */
#endif

#define BE_MAX(a, b) ((a) > (b) ? (a) : (b))
#define BE_ADD(a, b) ((a) + (b))

#define BE_HCHUNK 64 /* outputs per deinterleaved block of a stride-2 row (two such blocks live on the stack) */

/* horizontal step: y[o] = OP over kx of buf[o*sw + kx*dw], in kx order. Stride 1 walks the buffer contiguously;
 * stride 2 without dilation (the 3x3 stride-2 pools of ResNets), on rows of 16 outputs or more (on shorter ones the
 * split costs more than it saves), first splits BE_HCHUNK outputs' columns into even and odd runs, so that tap kx
 * reads run kx & 1 from kx / 2 on, contiguously: the compiler vectorises both steps (the buffer reaches at least
 * one column past the last tap: its 32 padding columns) */
#define BE_HORIZ(NAME, T, OP)                                                                                  \
    static void NAME(const T *buf, T *y, int ow, int kw, int sw, int dw) {                                    \
        if (sw == 1) {                                                                                         \
            for (int o = 0; o < ow; o++) y[o] = buf[o];                                                        \
            for (int k = 1; k < kw; k++) {                                                                     \
                const T *b = buf + k * dw;                                                                     \
                for (int o = 0; o < ow; o++) y[o] = OP(y[o], b[o]);                                            \
            }                                                                                                  \
            return;                                                                                            \
        }                                                                                                      \
        if (sw == 2 && dw == 1 && kw <= 16 && ow >= 16) {                                                      \
            T ev[BE_HCHUNK + 8], od[BE_HCHUNK + 8];                                                            \
            for (int o0 = 0; o0 < ow; o0 += BE_HCHUNK) {                                                       \
                const int n = ow - o0 < BE_HCHUNK ? ow - o0 : BE_HCHUNK, ne = n + (kw - 1) / 2;                \
                const T *b = buf + 2 * o0;                                                                     \
                T *yo = y + o0;                                                                                \
                for (int j = 0; j < ne; j++) ev[j] = b[2 * j], od[j] = b[2 * j + 1];                          \
                for (int o = 0; o < n; o++) yo[o] = ev[o];                                                     \
                for (int k = 1; k < kw; k++) {                                                                 \
                    const T *r = (k & 1 ? od : ev) + k / 2;                                                    \
                    for (int o = 0; o < n; o++) yo[o] = OP(yo[o], r[o]);                                       \
                }                                                                                              \
            }                                                                                                  \
            return;                                                                                            \
        }                                                                                                      \
        for (int o = 0; o < ow; o++) {                                                                         \
            const T *b = buf + (long)o * sw;                                                                   \
            T m = b[0];                                                                                        \
            for (int k = 1; k < kw; k++) m = OP(m, b[k * dw]);                                                 \
            y[o] = m;                                                                                          \
        }                                                                                                      \
    }

BE_HORIZ(be__hmax_f32, float, BE_MAX)
BE_HORIZ(be__hmax_i8, int8_t, BE_MAX)
BE_HORIZ(be__hmax_u8, uint8_t, BE_MAX)
BE_HORIZ(be__hsum_f32, float, BE_ADD)

/* defined by the set's pool.c, after this header */
static void be__horiz_f32(const float *buf, float *y, int ow, int kw, int sw, int dw, int sum, int simd);
static float be__plane_sum(const float *x, long n, int simd);
static float be__plane_max(const float *x, long n, int simd);

/* one plane of a max pool through the row buffer; HORIZ(buf, yrow, ow, kw, sw, dw) does step 2 */
#define BE_MAXPOOL_PLANE(NAME, T, LOWEST, HORIZ)                                                               \
    static void NAME(const T *x, T *y, int ih, int iw, int oh, int ow, int kh, int kw, int sh, int sw, int dh, \
                     int dw, int ph, int pw, int simd) {                                                       \
        T buf[BE_POOL_ROW + 32];                                                                               \
        int len = (ow - 1) * sw + (kw - 1) * dw + 1;                                                           \
        int jlo = pw < 0 ? 0 : pw < len ? pw : len; /* buf[j] is column j - pw */                            \
        int jhi = pw + iw < len ? pw + iw : len;                                                               \
        if (jhi < jlo) jhi = jlo;                                                                              \
        for (int j = 0; j < jlo; j++) buf[j] = LOWEST;                                                         \
        for (int j = jhi; j < len + 32; j++) buf[j] = LOWEST;                                                  \
        for (int oy = 0; oy < oh; oy++) {                                                                      \
            int a, b, start = oy * sh - ph;                                                                    \
            be__taps(start, kh, dh, 0, ih, &a, &b);                                                            \
            T *r = buf + jlo;                                                                                  \
            int n = jhi - jlo;                                                                                 \
            if (a == b) {                                                                                      \
                for (int j = 0; j < n; j++) r[j] = LOWEST;                                                     \
            } else {                                                                                           \
                const T *src = x + (long)(start + a * dh) * iw + (jlo - pw);                                   \
                for (int j = 0; j < n; j++) r[j] = src[j];                                                     \
                for (int k = a + 1; k < b; k++) {                                                              \
                    const T *s = x + (long)(start + k * dh) * iw + (jlo - pw);                                 \
                    for (int j = 0; j < n; j++) r[j] = BE_MAX(r[j], s[j]);                                     \
                }                                                                                              \
            }                                                                                                  \
            HORIZ;                                                                                             \
        }                                                                                                      \
    }

/* one plane of a max pool, visiting each window's valid taps (any row width) */
#define BE_MAXPOOL_DIRECT(NAME, T, LOWEST)                                                                     \
    static void NAME(const T *x, T *y, int ih, int iw, int oh, int ow, int kh, int kw, int sh, int sw, int dh, \
                     int dw, int ph, int pw) {                                                                 \
        for (int oy = 0; oy < oh; oy++) {                                                                      \
            int ya, yb, ys = oy * sh - ph;                                                                     \
            be__taps(ys, kh, dh, 0, ih, &ya, &yb);                                                             \
            for (int ox = 0; ox < ow; ox++) {                                                                  \
                int xa, xb, xs = ox * sw - pw;                                                                 \
                be__taps(xs, kw, dw, 0, iw, &xa, &xb);                                                         \
                T m = LOWEST;                                                                                  \
                for (int ky = ya; ky < yb; ky++)                                                               \
                    for (int kx = xa; kx < xb; kx++) {                                                         \
                        T v = x[(long)(ys + ky * dh) * iw + xs + kx * dw];                                     \
                        m = BE_MAX(v, m);                                                                      \
                    }                                                                                          \
                y[(long)oy * ow + ox] = m;                                                                     \
            }                                                                                                  \
        }                                                                                                      \
    }

BE_MAXPOOL_PLANE(be__maxplane_f32, float, -INFINITY, be__horiz_f32(buf, y + (long)oy * ow, ow, kw, sw, dw, 0, simd))
BE_MAXPOOL_PLANE(be__maxplane_i8, int8_t, INT8_MIN, be__hmax_i8(buf, y + (long)oy * ow, ow, kw, sw, dw))
BE_MAXPOOL_PLANE(be__maxplane_u8, uint8_t, 0, be__hmax_u8(buf, y + (long)oy * ow, ow, kw, sw, dw))
BE_MAXPOOL_DIRECT(be__maxdirect_f32, float, -INFINITY)
BE_MAXPOOL_DIRECT(be__maxdirect_i8, int8_t, INT8_MIN)
BE_MAXPOOL_DIRECT(be__maxdirect_u8, uint8_t, 0)

/* a pool's arguments, for the planes [lo, hi) a task of the worker pool runs */
typedef struct {
    const void *x;
    void *y;
    int ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw, clo_h, chi_h, clo_w, chi_w, simd;
    long size;
} be__pool_call;

#define BE_MAXPOOL(NAME, T, SUFFIX, SIMD)                                                                      \
    static void NAME##_planes(void *ctx, int tid, long lo, long hi) {                                          \
        const be__pool_call *c = ctx;                                                                          \
        (void)tid;                                                                                             \
        int buffered = (long)(c->ow - 1) * c->sw + (long)(c->kw - 1) * c->dw + 1 <= BE_POOL_ROW;               \
        for (long p = lo; p < hi; p++) {                                                                       \
            const T *xp = (const T *)c->x + p * c->ih * c->iw;                                                 \
            T *yp = (T *)c->y + p * c->oh * c->ow;                                                             \
            if (buffered)                                                                                      \
                be__maxplane_##SUFFIX(xp, yp, c->ih, c->iw, c->oh, c->ow, c->kh, c->kw, c->sh, c->sw, c->dh,   \
                                      c->dw, c->ph, c->pw, SIMD);                                              \
            else                                                                                               \
                be__maxdirect_##SUFFIX(xp, yp, c->ih, c->iw, c->oh, c->ow, c->kh, c->kw, c->sh, c->sw, c->dh,  \
                                       c->dw, c->ph, c->pw);                                                   \
        }                                                                                                      \
    }                                                                                                          \
    void NAME(const T *x, T *y, long nc, int ih, int iw, int oh, int ow, int kh, int kw, int sh, int sw,       \
              int dh, int dw, int ph, int pw, int threads) {                                                   \
        be__pool_call c = {x, y, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw, 0, 0, 0, 0, SIMD, 0};        \
        be_parallel(threads, nc, NAME##_planes, &c);                                                           \
    }

BE_MAXPOOL(be_maxpool2d_f32, float, f32, 1)
BE_MAXPOOL(be_maxpool2d_f32_portable, float, f32, 0)
BE_MAXPOOL(be_maxpool2d_i8, int8_t, i8, 0)
BE_MAXPOOL(be_maxpool2d_u8, uint8_t, u8, 0)

/* one plane of an average pool; `div` holds the per-column tap counts of the counting region */
static void be__avgplane(const float *x, float *y, int ih, int iw, int oh, int ow, int kh, int kw, int sh, int sw,
                         int dh, int dw, int ph, int pw, int clo_h, int chi_h, const int *cnt_w, int simd) {
    float buf[BE_POOL_ROW + 32];
    int len = (ow - 1) * sw + (kw - 1) * dw + 1;
    int jlo = pw < 0 ? 0 : pw < len ? pw : len, jhi = pw + iw < len ? pw + iw : len;
    if (jhi < jlo) jhi = jlo;
    for (int j = 0; j < jlo; j++) buf[j] = 0.0f;
    for (int j = jhi; j < len + 32; j++) buf[j] = 0.0f;
    for (int oy = 0; oy < oh; oy++) {
        int a, b, ca, cb, start = oy * sh - ph;
        be__taps(start, kh, dh, 0, ih, &a, &b);
        be__taps(start, kh, dh, clo_h, chi_h, &ca, &cb);
        float *r = buf + jlo;
        int n = jhi - jlo;
        for (int j = 0; j < n; j++) r[j] = 0.0f;
        for (int k = a; k < b; k++) {
            const float *s = x + (long)(start + k * dh) * iw + (jlo - pw);
            for (int j = 0; j < n; j++) r[j] += s[j];
        }
        float *yr = y + (long)oy * ow;
        be__horiz_f32(buf, yr, ow, kw, sw, dw, 1, simd);
        int rows = cb - ca;
        for (int o = 0; o < ow; o++) yr[o] = yr[o] / (float)(rows * cnt_w[o]);
    }
}

static void be__avgdirect(const float *x, float *y, int ih, int iw, int oh, int ow, int kh, int kw, int sh, int sw,
                          int dh, int dw, int ph, int pw, int clo_h, int chi_h, int clo_w, int chi_w) {
    for (int oy = 0; oy < oh; oy++) {
        int ya, yb, ca, cb, ys = oy * sh - ph;
        be__taps(ys, kh, dh, 0, ih, &ya, &yb);
        be__taps(ys, kh, dh, clo_h, chi_h, &ca, &cb);
        for (int ox = 0; ox < ow; ox++) {
            int xa, xb, wa, wb, xs = ox * sw - pw;
            be__taps(xs, kw, dw, 0, iw, &xa, &xb);
            be__taps(xs, kw, dw, clo_w, chi_w, &wa, &wb);
            float s = 0.0f;
            for (int ky = ya; ky < yb; ky++)
                for (int kx = xa; kx < xb; kx++) s += x[(long)(ys + ky * dh) * iw + xs + kx * dw];
            y[(long)oy * ow + ox] = s / (float)((cb - ca) * (wb - wa));
        }
    }
}

static void be__avgplanes(void *ctx, int tid, long lo, long hi) {
    const be__pool_call *c = ctx;
    (void)tid;
    const int ih = c->ih, iw = c->iw, oh = c->oh, ow = c->ow, kh = c->kh, kw = c->kw, sh = c->sh, sw = c->sw;
    const int dh = c->dh, dw = c->dw, ph = c->ph, pw = c->pw, clo_h = c->clo_h, chi_h = c->chi_h;
    const int clo_w = c->clo_w, chi_w = c->chi_w, simd = c->simd;
    int buffered = (long)(ow - 1) * sw + (long)(kw - 1) * dw + 1 <= BE_POOL_ROW;
    for (long p = lo; p < hi; p++) {
        const float *xp = (const float *)c->x + p * ih * iw;
        float *yp = (float *)c->y + p * oh * ow;
        if (!buffered) {
            be__avgdirect(xp, yp, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw, clo_h, chi_h, clo_w, chi_w);
            continue;
        }
        int cnt[BE_POOL_ROW];
        for (int o = 0; o < ow; o++) {
            int a, b;
            be__taps(o * sw - pw, kw, dw, clo_w, chi_w, &a, &b);
            cnt[o] = b - a;
        }
        be__avgplane(xp, yp, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw, clo_h, chi_h, cnt, simd);
    }
}

static void be__avgpool(const float *x, float *y, long nc, int ih, int iw, int oh, int ow, int kh, int kw, int sh,
                        int sw, int dh, int dw, int ph, int pw, int clo_h, int chi_h, int clo_w, int chi_w,
                        int threads, int simd) {
    be__pool_call c = {x, y, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw, clo_h, chi_h, clo_w, chi_w, simd, 0};
    be_parallel(threads, nc, be__avgplanes, &c);
}

void be_avgpool2d_f32(const float *x, float *y, long nc, int ih, int iw, int oh, int ow, int kh, int kw, int sh,
                      int sw, int dh, int dw, int ph, int pw, int clo_h, int chi_h, int clo_w, int chi_w,
                      int threads) {
    be__avgpool(x, y, nc, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw, clo_h, chi_h, clo_w, chi_w, threads, 1);
}

void be_avgpool2d_f32_portable(const float *x, float *y, long nc, int ih, int iw, int oh, int ow, int kh, int kw,
                               int sh, int sw, int dh, int dw, int ph, int pw, int clo_h, int chi_h, int clo_w,
                               int chi_w, int threads) {
    be__avgpool(x, y, nc, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw, clo_h, chi_h, clo_w, chi_w, threads, 0);
}

/* -- global pools ---------------------------------------------------------------------------------------------- */

#define BE_GLOBAL(NAME, T, EXPR)                                                                               \
    static void NAME##_planes(void *ctx, int tid, long lo, long hi) {                                          \
        const be__pool_call *c = ctx;                                                                          \
        const long size = c->size;                                                                             \
        (void)tid;                                                                                             \
        for (long p = lo; p < hi; p++) {                                                                       \
            const T *xp = (const T *)c->x + p * size;                                                          \
            ((T *)c->y)[p] = EXPR;                                                                             \
        }                                                                                                      \
    }                                                                                                          \
    void NAME(const T *x, T *y, long nc, long size, int threads) {                                            \
        be__pool_call c = {.x = x, .y = y, .size = size};                                                      \
        be_parallel(nc * size > 32768 ? threads : 1, nc, NAME##_planes, &c);                                   \
    }

static inline int8_t be__max_i8(const int8_t *x, long n) {
    int8_t m = INT8_MIN;
    for (long i = 0; i < n; i++) m = BE_MAX(x[i], m);
    return m;
}

static inline uint8_t be__max_u8(const uint8_t *x, long n) {
    uint8_t m = 0;
    for (long i = 0; i < n; i++) m = BE_MAX(x[i], m);
    return m;
}

BE_GLOBAL(be_global_avgpool_f32, float, be__plane_sum(xp, size, 1) / (float)size)
BE_GLOBAL(be_global_avgpool_f32_portable, float, be__plane_sum(xp, size, 0) / (float)size)
BE_GLOBAL(be_global_maxpool_f32, float, be__plane_max(xp, size, 1))
BE_GLOBAL(be_global_maxpool_f32_portable, float, be__plane_max(xp, size, 0))
BE_GLOBAL(be_global_maxpool_i8, int8_t, be__max_i8(xp, size))
BE_GLOBAL(be_global_maxpool_u8, uint8_t, be__max_u8(xp, size))

#endif
