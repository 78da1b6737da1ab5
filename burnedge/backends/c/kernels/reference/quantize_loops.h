/* Internal to the kernel sets: the loops of quantize.c (reference/quantize.c has the algorithm). A set's
 * quantize.c includes this and instantiates BE_QUANTIZE / BE_DEQUANTIZE, with VEC its vector body for a row
 * (statements over the locals i, inner, xp, yp, s, z / zp[c]; empty: the scalar loop does every element). */
#ifndef BURNEDGE_QUANTIZE_LOOPS_H
#define BURNEDGE_QUANTIZE_LOOPS_H

#include "qelementwise.h"

static inline float quant1(float x, float s, float zp, float lo, float hi) {
    float r = nearbyintf(x / s);
    if (isnan(r)) return 0.0f;
    r += zp;
    return r < lo ? lo : (r > hi ? hi : r);
}

#define BE_QUANTIZE(NAME, T, LO, HI, VEC)                                                                        \
    void NAME(const float *x, T *y, long outer, long C, long inner, const float *scale, const int32_t *zp,       \
              int threads) {                                                                                     \
        const long planes = outer * C;                                                                           \
        const int par = threads > 1 && planes * inner > 32768 && planes > 1;                                     \
        _Pragma("omp parallel for num_threads(threads) schedule(static) if (par)")                               \
        for (long pl = 0; pl < planes; pl++) {                                                                   \
            const long c = pl % C;                                                                               \
            const float s = scale[c], z = (float)zp[c];                                                          \
            const float *xp = x + pl * inner;                                                                    \
            T *yp = y + pl * inner;                                                                              \
            long i = 0;                                                                                          \
            VEC                                                                                                  \
            for (; i < inner; i++) yp[i] = (T)quant1(xp[i], s, z, (float)(LO), (float)(HI));                     \
        }                                                                                                        \
    }

#define BE_DEQUANTIZE(NAME, T, VEC)                                                                              \
    void NAME(const T *x, float *y, long outer, long C, long inner, const float *scale, const int32_t *zp,        \
              int threads) {                                                                                     \
        const long planes = outer * C;                                                                           \
        const int par = threads > 1 && planes * inner > 32768 && planes > 1;                                     \
        _Pragma("omp parallel for num_threads(threads) schedule(static) if (par)")                               \
        for (long pl = 0; pl < planes; pl++) {                                                                   \
            const long c = pl % C;                                                                               \
            const float s = scale[c];                                                                            \
            const T *xp = x + pl * inner;                                                                        \
            float *yp = y + pl * inner;                                                                          \
            long i = 0;                                                                                          \
            VEC                                                                                                  \
            for (; i < inner; i++) yp[i] = (float)((int64_t)xp[i] - zp[c]) * s;                                  \
        }                                                                                                        \
    }

#endif
