/* QuantizeLinear / DequantizeLinear between float32 and int8/uint8/int32, per tensor or per channel
 * (qelementwise.h). Quantize divides in float32 (IEEE like x / s), rounds half to even, adds the zero point
 * and clamps in float before converting; every element reads its input before its output is written.
 */
#include "qelementwise.h"

static inline float quant1(float x, float s, float zp, float lo, float hi) {
    float r = nearbyintf(x / s);
    if (isnan(r)) return 0.0f;
    r += zp;
    return r < lo ? lo : (r > hi ? hi : r);
}

#define BE_QUANTIZE(NAME, T, LO, HI)                                                                             \
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
            for (; i < inner; i++) yp[i] = (T)quant1(xp[i], s, z, (float)(LO), (float)(HI));                     \
        }                                                                                                        \
    }

BE_QUANTIZE(be_quantize_f32_i8, int8_t, -128, 127)
BE_QUANTIZE(be_quantize_f32_u8, uint8_t, 0, 255)

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

BE_DEQUANTIZE(be_dequantize_i8_f32, int8_t, )
BE_DEQUANTIZE(be_dequantize_u8_f32, uint8_t, )
BE_DEQUANTIZE(be_dequantize_i32_f32, int32_t, )
