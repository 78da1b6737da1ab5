/* Blocked QuantizeLinear / DequantizeLinear (qelementwise.h): the scale and zero point of element (o, c, i) of
 * x seen as [outer, C, inner] sit at (o * C_blocks + c / block) * inner + i, one per block of `block` elements
 * along the quantization axis. Same arithmetic as quantize_loops.h: float32 division, rounding half to even,
 * the zero point added and the result clamped in float; NaN gives 0. Scalar loops on every target.
 */
#include <math.h>

#include "qelementwise.h"
#include "workers.h"

/* what a blocked (de)quantize's planes task reads */
typedef struct {
    const void *x, *zp;
    void *y;
    long C, inner, block;
    const float *scale;
} blocked_call;

#define BE_QUANTIZE_BLOCKED(NAME, T, LO, HI)                                                                     \
    static void NAME##_planes(void *ctx, int tid, long first, long last) {                                       \
        const blocked_call *a = ctx;                                                                             \
        const float *x = a->x, *scale = a->scale;                                                                \
        const T *zp = a->zp;                                                                                     \
        T *y = a->y;                                                                                             \
        const long C = a->C, inner = a->inner, block = a->block, cb = (C + block - 1) / block;                   \
        (void)tid;                                                                                               \
        for (long pl = first; pl < last; pl++) {                                                                 \
            const long o = pl / C, c = pl % C, p = (o * cb + c / block) * inner;                                 \
            for (long i = 0; i < inner; i++) {                                                                   \
                float r = nearbyintf(x[pl * inner + i] / scale[p + i]) + (float)zp[p + i];                       \
                r = isnan(r) ? 0.0f : r < (float)(LO) ? (float)(LO) : (r > (float)(HI) ? (float)(HI) : r);       \
                y[pl * inner + i] = (T)r;                                                                        \
            }                                                                                                    \
        }                                                                                                        \
    }                                                                                                            \
    void NAME(const float *x, T *y, long outer, long C, long inner, long block, const float *scale,            \
              const T *zp, int threads) {                                                                        \
        const int par = threads > 1 && outer * C * inner > 32768 && outer * C > 1;                             \
        blocked_call a = {x, zp, y, C, inner, block, scale};                                                     \
        be_parallel(par ? threads : 1, outer * C, NAME##_planes, &a);                                            \
    }

#define BE_DEQUANTIZE_BLOCKED(NAME, T)                                                                           \
    static void NAME##_planes(void *ctx, int tid, long first, long last) {                                       \
        const blocked_call *a = ctx;                                                                             \
        const T *x = a->x, *zp = a->zp;                                                                          \
        const float *scale = a->scale;                                                                           \
        float *y = a->y;                                                                                         \
        const long C = a->C, inner = a->inner, block = a->block, cb = (C + block - 1) / block;                   \
        (void)tid;                                                                                               \
        for (long pl = first; pl < last; pl++) {                                                                 \
            const long o = pl / C, c = pl % C, p = (o * cb + c / block) * inner;                                 \
            for (long i = 0; i < inner; i++)                                                                     \
                y[pl * inner + i] = (float)((int64_t)x[pl * inner + i] - zp[p + i]) * scale[p + i];              \
        }                                                                                                        \
    }                                                                                                            \
    void NAME(const T *x, float *y, long outer, long C, long inner, long block, const float *scale,            \
              const T *zp, int threads) {                                                                        \
        const int par = threads > 1 && outer * C * inner > 32768 && outer * C > 1;                             \
        blocked_call a = {x, zp, y, C, inner, block, scale};                                                     \
        be_parallel(par ? threads : 1, outer * C, NAME##_planes, &a);                                            \
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
