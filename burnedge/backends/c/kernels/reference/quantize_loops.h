/* Internal to the kernel sets: the loops of quantize.c (reference/quantize.c has the algorithm). A set's
 * quantize.c includes this and instantiates BE_QUANTIZE / BE_DEQUANTIZE, with VEC its vector body for a row
 * (statements over the locals i, inner, xp, yp, s, z / zp[c]; empty: the scalar loop does every element). */
#ifndef BURNEDGE_QUANTIZE_LOOPS_H
#define BURNEDGE_QUANTIZE_LOOPS_H

#include "qelementwise.h"
#include "workers.h"

static inline float quant1(float x, float s, float zp, float lo, float hi) {
    float r = nearbyintf(x / s);
    if (isnan(r)) return 0.0f;
    r += zp;
    return r < lo ? lo : (r > hi ? hi : r);
}

/* what a (de)quantize's planes task reads */
typedef struct {
    const void *x;
    void *y;
    long C, inner;
    const float *scale;
    const int32_t *zp;
} be_quantize_call;

#define BE_QUANTIZE(NAME, T, LO, HI, VEC)                                                                        \
    static void NAME##_planes(void *ctx, int tid, long first, long last) {                                       \
        const be_quantize_call *a = ctx;                                                                         \
        const float *x = a->x;                                                                                   \
        T *y = a->y;                                                                                             \
        const long C = a->C, inner = a->inner;                                                                   \
        const float *scale = a->scale;                                                                           \
        const int32_t *zp = a->zp;                                                                               \
        (void)tid;                                                                                               \
        for (long pl = first; pl < last; pl++) {                                                                 \
            const long c = pl % C;                                                                               \
            const float s = scale[c], z = (float)zp[c];                                                          \
            const float *xp = x + pl * inner;                                                                    \
            T *yp = y + pl * inner;                                                                              \
            long i = 0;                                                                                          \
            VEC                                                                                                  \
            for (; i < inner; i++) yp[i] = (T)quant1(xp[i], s, z, (float)(LO), (float)(HI));                     \
        }                                                                                                        \
    }                                                                                                            \
    void NAME(const float *x, T *y, long outer, long C, long inner, const float *scale, const int32_t *zp,       \
              int threads) {                                                                                     \
        const long planes = outer * C;                                                                           \
        const int par = threads > 1 && planes * inner > 32768 && planes > 1;                                     \
        be_quantize_call a = {x, y, C, inner, scale, zp};                                                        \
        be_parallel(par ? threads : 1, planes, NAME##_planes, &a);                                               \
    }

#define BE_DEQUANTIZE(NAME, T, VEC)                                                                              \
    static void NAME##_planes(void *ctx, int tid, long first, long last) {                                       \
        const be_quantize_call *a = ctx;                                                                         \
        const T *x = a->x;                                                                                       \
        float *y = a->y;                                                                                         \
        const long C = a->C, inner = a->inner;                                                                   \
        const float *scale = a->scale;                                                                           \
        const int32_t *zp = a->zp;                                                                               \
        (void)tid;                                                                                               \
        for (long pl = first; pl < last; pl++) {                                                                 \
            const long c = pl % C;                                                                               \
            const float s = scale[c];                                                                            \
            const T *xp = x + pl * inner;                                                                        \
            float *yp = y + pl * inner;                                                                          \
            long i = 0;                                                                                          \
            VEC                                                                                                  \
            for (; i < inner; i++) yp[i] = (float)((int64_t)xp[i] - zp[c]) * s;                                  \
        }                                                                                                        \
    }                                                                                                            \
    void NAME(const T *x, float *y, long outer, long C, long inner, const float *scale, const int32_t *zp,        \
              int threads) {                                                                                     \
        const long planes = outer * C;                                                                           \
        const int par = threads > 1 && planes * inner > 32768 && planes > 1;                                     \
        be_quantize_call a = {x, y, C, inner, scale, zp};                                                        \
        be_parallel(par ? threads : 1, planes, NAME##_planes, &a);                                               \
    }

#endif
