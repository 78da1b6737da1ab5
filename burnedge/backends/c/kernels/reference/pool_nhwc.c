/* Global average and max pools over NHWC inputs, and windowed max pools NHWC to NHWC.
 *
 * Each image's C outputs are accumulated pixel after pixel, a whole row of channels at a time: the inner loop runs
 * over contiguous channels, so the compiler vectorises it on every target (AVX2, NEON), and each output is one sum
 * in pixel order whatever the thread count (threads split the images). The average divides the sum by size;
 * the max keeps a NaN once it has seen one, like the reference. A windowed max pool (the 3x3 stride-2 pool after
 * a ResNet stem) takes each output pixel's C maxima over its window's taps the same way, a row of channels per tap.
 */
#include "pool_nhwc.h"
#include "pool.h" /* be__taps */
#include "workers.h"

/* whether the max so far m stays against v: a NaN, once met, is kept (like the reference) */
#define KEEP_F32(m, v) ((m) != (m) || (m) >= (v))

typedef struct {
    const float *x;
    float *y;
    long size, c;
} nhwc_pool_call;

static void avg_images(void *ctx, int tid, long lo, long hi) {
    const nhwc_pool_call *a = ctx;
    const float *x = a->x;
    float *y = a->y;
    const long size = a->size, c = a->c;
    (void)tid;
    for (long i = lo; i < hi; i++) {
        float *restrict yi = y + i * c;
        const float *restrict xi = x + i * size * c;
        for (long k = 0; k < c; k++) yi[k] = 0.0f;
        for (long p = 0; p < size; p++)
            for (long k = 0; k < c; k++) yi[k] += xi[p * c + k];
        for (long k = 0; k < c; k++) yi[k] /= (float)size;
    }
}

void be_global_avgpool_nhwc_f32(const float *x, float *y, long n, long size, long c, int threads) {
    nhwc_pool_call a = {x, y, size, c};
    be_parallel(threads, n, avg_images, &a);
}

static void max_images(void *ctx, int tid, long lo, long hi) {
    const nhwc_pool_call *a = ctx;
    const float *x = a->x;
    float *y = a->y;
    const long size = a->size, c = a->c;
    (void)tid;
    for (long i = lo; i < hi; i++) {
        float *restrict yi = y + i * c;
        const float *restrict xi = x + i * size * c;
        for (long k = 0; k < c; k++) yi[k] = xi[k];
        for (long p = 1; p < size; p++)
            for (long k = 0; k < c; k++) yi[k] = KEEP_F32(yi[k], xi[p * c + k]) ? yi[k] : xi[p * c + k];
    }
}

void be_global_maxpool_nhwc_f32(const float *x, float *y, long n, long size, long c, int threads) {
    nhwc_pool_call a = {x, y, size, c};
    be_parallel(threads, n, max_images, &a);
}

typedef struct {
    const void *x;
    void *y;
    long c;
    int ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw;
} nhwc_window_call;

/* output rows lo .. hi-1 (of all images: row r is image r / oh, row r % oh); LOWEST where a window is all padding,
 * KEEP(m, v): whether the max so far m stays against v */
#define NHWC_MAXPOOL(NAME, T, LOWEST, KEEP)                                                                    \
    static void NAME##_rows(void *ctx, int tid, long lo, long hi) {                                            \
        const nhwc_window_call *a = ctx;                                                                       \
        const long c = a->c;                                                                                   \
        (void)tid;                                                                                             \
        for (long r = lo; r < hi; r++) {                                                                       \
            const long img = r / a->oh;                                                                        \
            const int oy = (int)(r % a->oh), y0 = oy * a->sh - a->ph;                                          \
            const T *xi = (const T *)a->x + img * a->ih * a->iw * c;                                           \
            T *yr = (T *)a->y + r * a->ow * c;                                                                 \
            int ya, yb;                                                                                        \
            be__taps(y0, a->kh, a->dh, 0, a->ih, &ya, &yb);                                                    \
            for (int ox = 0; ox < a->ow; ox++) {                                                               \
                const int x0 = ox * a->sw - a->pw;                                                             \
                int xa, xb;                                                                                    \
                be__taps(x0, a->kw, a->dw, 0, a->iw, &xa, &xb);                                                \
                T *restrict o = yr + (long)ox * c;                                                             \
                if (ya == yb || xa == xb) {                                                                    \
                    for (long k = 0; k < c; k++) o[k] = LOWEST;                                                \
                    continue;                                                                                  \
                }                                                                                              \
                int first = 1;                                                                                 \
                for (int ky = ya; ky < yb; ky++)                                                               \
                    for (int kx = xa; kx < xb; kx++) {                                                         \
                        const T *restrict v = xi + ((long)(y0 + ky * a->dh) * a->iw + x0 + kx * a->dw) * c;    \
                        if (first) {                                                                           \
                            for (long k = 0; k < c; k++) o[k] = v[k];                                          \
                            first = 0;                                                                         \
                            continue;                                                                          \
                        }                                                                                      \
                        for (long k = 0; k < c; k++) o[k] = KEEP(o[k], v[k]) ? o[k] : v[k];                    \
                    }                                                                                          \
            }                                                                                                  \
        }                                                                                                      \
    }                                                                                                          \
    void NAME(const T *x, T *y, long n, long c, int ih, int iw, int oh, int ow, int kh, int kw, int sh, int sw,  \
              int dh, int dw, int ph, int pw, int threads) {                                                   \
        nhwc_window_call a = {x, y, c, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw};                        \
        /* a pool of under 16 K outputs is done before a second thread would have started its share */         \
        if ((double)n * oh * ow * c < 16384.0) threads = 1;                                                    \
        be_parallel(threads, n * oh, NAME##_rows, &a);                                                         \
    }

#define KEEP_INT(m, v) ((m) >= (v))
NHWC_MAXPOOL(be_maxpool2d_nhwc_f32, float, -INFINITY, KEEP_F32)
NHWC_MAXPOOL(be_maxpool2d_nhwc_i8, int8_t, INT8_MIN, KEEP_INT)
