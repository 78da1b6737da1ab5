/* Blocked QuantizeLinear / DequantizeLinear (qelementwise.h): the scale and zero point of element (o, c, i) of
 * x seen as [outer, C, inner] sit at (o * C_blocks + c / block) * inner + i, one per block of `block` elements
 * along the quantization axis. Same arithmetic as quantize_loops.h: float32 division, rounding half to even,
 * the zero point added and the result clamped in float; NaN gives 0. Scalar loops on every target.
 */
#include <math.h>

#include "qelementwise.h"

#define BE_QUANTIZE_BLOCKED(NAME, T, LO, HI)                                                                     \
    void NAME(const float *x, T *y, long outer, long C, long inner, long block, const float *scale,            \
              const T *zp, int threads) {                                                                        \
        const long cb = (C + block - 1) / block;                                                                 \
        const int par = threads > 1 && outer * C * inner > 32768 && outer * C > 1;                             \
        _Pragma("omp parallel for num_threads(threads) schedule(static) if (par)")                               \
        for (long pl = 0; pl < outer * C; pl++) {                                                                \
            const long o = pl / C, c = pl % C, p = (o * cb + c / block) * inner;                                 \
            for (long i = 0; i < inner; i++) {                                                                   \
                float r = nearbyintf(x[pl * inner + i] / scale[p + i]) + (float)zp[p + i];                       \
                r = isnan(r) ? 0.0f : r < (float)(LO) ? (float)(LO) : (r > (float)(HI) ? (float)(HI) : r);       \
                y[pl * inner + i] = (T)r;                                                                        \
            }                                                                                                    \
        }                                                                                                        \
    }

#define BE_DEQUANTIZE_BLOCKED(NAME, T)                                                                           \
    void NAME(const T *x, float *y, long outer, long C, long inner, long block, const float *scale,            \
              const T *zp, int threads) {                                                                        \
        const long cb = (C + block - 1) / block;                                                                 \
        const int par = threads > 1 && outer * C * inner > 32768 && outer * C > 1;                             \
        _Pragma("omp parallel for num_threads(threads) schedule(static) if (par)")                               \
        for (long pl = 0; pl < outer * C; pl++) {                                                                \
            const long o = pl / C, c = pl % C, p = (o * cb + c / block) * inner;                                 \
            for (long i = 0; i < inner; i++)                                                                     \
                y[pl * inner + i] = (float)((int64_t)x[pl * inner + i] - zp[p + i]) * scale[p + i];              \
        }                                                                                                        \
    }

BE_QUANTIZE_BLOCKED(be_quantize_blocked_f32_i8, int8_t, -128, 127)
BE_QUANTIZE_BLOCKED(be_quantize_blocked_f32_u8, uint8_t, 0, 255)
BE_QUANTIZE_BLOCKED(be_quantize_blocked_f32_i16, int16_t, -32768, 32767)
BE_QUANTIZE_BLOCKED(be_quantize_blocked_f32_u16, uint16_t, 0, 65535)
BE_DEQUANTIZE_BLOCKED(be_dequantize_blocked_i8_f32, int8_t)
BE_DEQUANTIZE_BLOCKED(be_dequantize_blocked_u8_f32, uint8_t)
BE_DEQUANTIZE_BLOCKED(be_dequantize_blocked_i16_f32, int16_t)
BE_DEQUANTIZE_BLOCKED(be_dequantize_blocked_u16_f32, uint16_t)
BE_DEQUANTIZE_BLOCKED(be_dequantize_blocked_i32_f32, int32_t)
