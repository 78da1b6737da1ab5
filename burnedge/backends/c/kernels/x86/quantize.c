/* QuantizeLinear / DequantizeLinear between float32 and int8/uint8/int16/uint16/int32, per tensor or per channel
 * (qelementwise.h). Quantize divides in float32 (IEEE like x / s: _mm256_div_ps), rounds half to even, adds the
 * zero point and clamps in float before converting; every element reads its input before its output is written.
 */
#include "quantize_loops.h"
#include "x86_qgemm.h"

#define BE_QUANT_VEC(PACK)                                                                                       \
    {                                                                                                            \
        const __m256 sv = _mm256_set1_ps(s), zv = _mm256_set1_ps(z), lov = _mm256_set1_ps((float)(LO_)),        \
                     hiv = _mm256_set1_ps((float)(HI_)), zero = _mm256_setzero_ps();                             \
        (void)zero;                                                                                              \
        for (; i + 16 <= inner; i += 16) {                                                                       \
            __m256i q[2];                                                                                        \
            for (int h = 0; h < 2; h++) {                                                                        \
                __m256 r = _mm256_round_ps(_mm256_div_ps(_mm256_loadu_ps(xp + i + 8 * h), sv),                   \
                                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);                       \
                const __m256 nan = _mm256_cmp_ps(r, r, _CMP_UNORD_Q);                                            \
                r = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(r, zv), lov), hiv);                                \
                q[h] = _mm256_cvtps_epi32(_mm256_andnot_ps(nan, r));                                             \
            }                                                                                                    \
            __m256i p16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(q[0], q[1]), 0xD8);                       \
            _mm_storeu_si128((__m128i *)(yp + i),                                                                \
                             PACK(_mm256_castsi256_si128(p16), _mm256_extracti128_si256(p16, 1)));               \
        }                                                                                                        \
    }

#define LO_ -128
#define HI_ 127
BE_QUANTIZE(be_quantize_f32_i8, int8_t, -128, 127, BE_QUANT_VEC(_mm_packs_epi16))
#undef LO_
#undef HI_
#define LO_ 0
#define HI_ 255
BE_QUANTIZE(be_quantize_f32_u8, uint8_t, 0, 255, BE_QUANT_VEC(_mm_packus_epi16))
#undef LO_
#undef HI_

#define BE_DQ_VEC(CVT)                                                                                           \
    {                                                                                                            \
        const __m256 sv = _mm256_set1_ps(s);                                                                     \
        const __m256i zv = _mm256_set1_epi32(zp[c]);                                                             \
        for (; i + 8 <= inner; i += 8) {                                                                         \
            const __m256i v = _mm256_sub_epi32(CVT(_mm_loadl_epi64((const __m128i *)(xp + i))), zv);             \
            _mm256_storeu_ps(yp + i, _mm256_mul_ps(_mm256_cvtepi32_ps(v), sv));                                  \
        }                                                                                                        \
    }
BE_DEQUANTIZE(be_dequantize_i8_f32, int8_t, BE_DQ_VEC(_mm256_cvtepi8_epi32))
BE_DEQUANTIZE(be_dequantize_u8_f32, uint8_t, BE_DQ_VEC(_mm256_cvtepu8_epi32))
BE_DEQUANTIZE(be_dequantize_i32_f32, int32_t, )
BE_QUANTIZE(be_quantize_f32_i16, int16_t, -32768, 32767, )
BE_QUANTIZE(be_quantize_f32_u16, uint16_t, 0, 65535, )
BE_DEQUANTIZE(be_dequantize_i16_f32, int16_t, )
BE_DEQUANTIZE(be_dequantize_u16_f32, uint16_t, )
