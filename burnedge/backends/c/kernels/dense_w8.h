/* Weight-only int8 dense (lower/dense_w8.py): Y = epilogue(A * B) with float activations and B kept as int8
 * levels q with a float scale and zero point per column, B(k, j) = ((float)q(k, j) - zero[j]) * scale[j]: the
 * floats DequantizeLinear gives, bit for bit (integers, one float32 rounding).
 *
 * bq holds the int8 B panels of the float GEMM's layout (K x BE_NR per panel, columns padded), scale and zero
 * are padded to the panels' columns. Up to BE_W8_GEMV_ROWS rows the weights are dequantized in registers as they
 * are used (no scratch); with more, a block of be_gemm_w8_nb(K) panels is dequantized into scratch and the float
 * GEMM runs on it as packed B, the epilogue moved to the block's first column. scratch: be_gemm_w8_scratch(K)
 * floats (unused up to BE_W8_GEMV_ROWS rows).
 */
#ifndef BURNEDGE_DENSE_W8_H
#define BURNEDGE_DENSE_W8_H

#include "gemm.h"

#define BE_W8_GEMV_ROWS 4 /* lower/dense_w8.py: GEMV_ROWS */

void be_gemm_w8_f32(long M, long N, long K, const float *a, long rsa, long csa, const int8_t *bq,
                    const float *scale, const float *zero, float *c, long ldc, const be_epi *e, float *scratch,
                    int threads);
/* column panels per dequantized block: about 64 KiB of floats, at least one panel */
static inline long be_gemm_w8_nb(long K) {
    const long nb = 16384 / (K * BE_NR);
    return nb < 1 ? 1 : nb;
}
static inline long be_gemm_w8_scratch(long K) { return be_gemm_w8_nb(K) * K * BE_NR + 16; }

#endif
