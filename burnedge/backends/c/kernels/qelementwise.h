/* int8 elementwise kernels: burnedge.QAdd, QMul (broadcasting), QLut, QRequant, and ONNX QuantizeLinear /
 * DequantizeLinear (float32 <-> int8/uint8/int16/uint16, per tensor or per axis).
 *
 * Binary ops see their operands as an nd iteration over the output shape with element strides per operand
 * (0 = broadcast); the innermost dimension runs as one row, vectorised when both operands' inner strides are
 * 0 or 1. QAdd: y = clamp(y_zp + round_shift((a - a_zp) * am + (b - b_zp) * bm, shift)). QMul and QRequant use
 * the normalised requantisation parameters of qgemm.h (m, s, lim).
 */
#ifndef BURNEDGE_QELEMENTWISE_H
#define BURNEDGE_QELEMENTWISE_H

#include "qgemm.h"

enum { BE_QADD = 0, BE_QMUL = 1 };

typedef struct {
    int op;                  /* BE_QADD or BE_QMUL */
    int32_t a_zp, b_zp, y_zp;
    int32_t am, bm, shift;   /* QAdd: the two multipliers and the shift (1..62) */
    int32_t m, s, lim;       /* QMul: normalised requantisation */
    int32_t lo, hi;
} be_qbin;

void be_qbinary_i8(const int8_t *a, const int8_t *b, int8_t *y, int nd, const long *shape, const long *sa,
                   const long *sb, const be_qbin *p, int threads);

/* y[i] = table[x[i] + 128] */
void be_qlut_i8(const int8_t *x, int8_t *y, const int8_t *table, long n, int threads);

/* y = clamp(y_zp + rule(x - x_zp)) with normalised (m, s, lim) */
void be_qrequant_i8(const int8_t *x, int8_t *y, long n, int32_t x_zp, int32_t y_zp, int32_t m, int32_t s,
                    int32_t lim, int threads);

/* QuantizeLinear over [outer, C, inner]: y = clamp(nearbyintf(x / scale[c]) + zp[c], lo, hi); NaN gives 0.
 * The division is float32 (no reciprocal), rounding half to even. */
void be_quantize_f32_i8(const float *x, int8_t *y, long outer, long C, long inner, const float *scale,
                        const int32_t *zp, int threads);
void be_quantize_f32_u8(const float *x, uint8_t *y, long outer, long C, long inner, const float *scale,
                        const int32_t *zp, int threads);

/* DequantizeLinear over [outer, C, inner]: y = (float)(q - zp[c]) * scale[c] */
void be_dequantize_i8_f32(const int8_t *x, float *y, long outer, long C, long inner, const float *scale,
                          const int32_t *zp, int threads);
void be_dequantize_u8_f32(const uint8_t *x, float *y, long outer, long C, long inner, const float *scale,
                          const int32_t *zp, int threads);
void be_dequantize_i32_f32(const int32_t *x, float *y, long outer, long C, long inner, const float *scale,
                           const int32_t *zp, int threads);
/* the 16-bit forms (scalar loops on every target) */
void be_quantize_f32_i16(const float *x, int16_t *y, long outer, long C, long inner, const float *scale,
                         const int32_t *zp, int threads);
void be_quantize_f32_u16(const float *x, uint16_t *y, long outer, long C, long inner, const float *scale,
                         const int32_t *zp, int threads);
void be_dequantize_i16_f32(const int16_t *x, float *y, long outer, long C, long inner, const float *scale,
                           const int32_t *zp, int threads);
void be_dequantize_u16_f32(const uint16_t *x, float *y, long outer, long C, long inner, const float *scale,
                           const int32_t *zp, int threads);

/* blocked forms (reference/quantize_blocked.c): scale and zp (of the quantized type) hold one value per block of
 * `block` elements along C: [outer, ceil(C / block), inner] */
void be_quantize_blocked_f32_i8(const float *x, int8_t *y, long outer, long C, long inner, long block,
                                const float *scale, const int8_t *zp, int threads);
void be_quantize_blocked_f32_u8(const float *x, uint8_t *y, long outer, long C, long inner, long block,
                                const float *scale, const uint8_t *zp, int threads);
void be_quantize_blocked_f32_i16(const float *x, int16_t *y, long outer, long C, long inner, long block,
                                const float *scale, const int16_t *zp, int threads);
void be_quantize_blocked_f32_u16(const float *x, uint16_t *y, long outer, long C, long inner, long block,
                                const float *scale, const uint16_t *zp, int threads);
void be_dequantize_blocked_i8_f32(const int8_t *x, float *y, long outer, long C, long inner, long block,
                                  const float *scale, const int8_t *zp, int threads);
void be_dequantize_blocked_u8_f32(const uint8_t *x, float *y, long outer, long C, long inner, long block,
                                  const float *scale, const uint8_t *zp, int threads);
void be_dequantize_blocked_i16_f32(const int16_t *x, float *y, long outer, long C, long inner, long block,
                                  const float *scale, const int16_t *zp, int threads);
void be_dequantize_blocked_u16_f32(const uint16_t *x, float *y, long outer, long C, long inner, long block,
                                  const float *scale, const uint16_t *zp, int threads);
void be_dequantize_blocked_i32_f32(const int32_t *x, float *y, long outer, long C, long inner, long block,
                                  const float *scale, const int32_t *zp, int threads);

#endif
