/* ONNX QLinearMatMul with per-tensor scales and zero points, 8-bit operands of one type (int8 or uint8):
 * y = clamp(nearbyintf((float)acc * (a_scale * b_scale / y_scale)) + y_zp) with acc = sum (a - a_zp)(b - b_zp)
 * exact in int32, the multiplier and the rounding in float32 (burnedge/ops/matmul.py). Scales and zero points
 * are pointers to one element each, so they may be run-time inputs. The batch strides (elements) of a and b are
 * 0 for a broadcast operand.
 */
#ifndef BURNEDGE_QLINEAR_MATMUL_H
#define BURNEDGE_QLINEAR_MATMUL_H

#include <stdint.h>

void be_qlinear_matmul_i8(const int8_t *a, const int8_t *b, int8_t *y, long batch, long M, long K, long N,
                          long a_bstride, long b_bstride, const float *a_scale, const int8_t *a_zp,
                          const float *b_scale, const int8_t *b_zp, const float *y_scale, const int8_t *y_zp,
                          int threads);
void be_qlinear_matmul_u8(const uint8_t *a, const uint8_t *b, uint8_t *y, long batch, long M, long K, long N,
                          long a_bstride, long b_bstride, const float *a_scale, const uint8_t *a_zp,
                          const float *b_scale, const uint8_t *b_zp, const float *y_scale, const uint8_t *y_zp,
                          int threads);

#endif
