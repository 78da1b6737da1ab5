/* QuantizeLinear / DequantizeLinear between float32 and int8/uint8/int16/uint16/int32, per tensor or per channel
 * (qelementwise.h). Quantize divides in float32 (IEEE like x / s), rounds half to even, adds the zero point
 * and clamps in float before converting; every element reads its input before its output is written.
 */
#include "quantize_loops.h"

BE_QUANTIZE(be_quantize_f32_i8, int8_t, -128, 127, )
BE_QUANTIZE(be_quantize_f32_u8, uint8_t, 0, 255, )

BE_DEQUANTIZE(be_dequantize_i8_f32, int8_t, )
BE_DEQUANTIZE(be_dequantize_u8_f32, uint8_t, )
BE_DEQUANTIZE(be_dequantize_i32_f32, int32_t, )
BE_QUANTIZE(be_quantize_f32_i16, int16_t, -32768, 32767, )
BE_QUANTIZE(be_quantize_f32_u16, uint16_t, 0, 65535, )
BE_DEQUANTIZE(be_dequantize_i16_f32, int16_t, )
BE_DEQUANTIZE(be_dequantize_u16_f32, uint16_t, )
