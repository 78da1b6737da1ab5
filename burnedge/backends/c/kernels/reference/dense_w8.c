/* Weight-only int8 dense (dense_w8.h).
 *
 * Up to BE_W8_GEMV_ROWS rows (a GEMV, a few tokens): each 16-column panel's weights are dequantized in registers
 * and used at once by every row (4 at a time; no scratch, 1 byte read per weight), panels split over threads.
 * More rows: per block of column panels, the int8 panels are dequantized into scratch, then the float GEMM
 * (be_gemm_f32) runs on the block as packed B, its epilogue's operands moved to the block's columns, so every
 * output is the float GEMM's own sum on the very floats DequantizeLinear gives.
 * x86: the GEMV tile in AVX2 (two 8-lane conversions per weight row, 8 accumulators in registers; one row: K in
 * two halves of accumulators, for the FMA latency).
 */
#include "dense_w8_loops.h"

static void gemv_w8_panel(const float *const *ar, int mr, long csa, long K, const int8_t *q, const float *s,
                          const float *z, float acc[W8_ROWS][BE_NR]) {
    (void)mr; /* rows past it repeat a real row */
    for (int r = 0; r < W8_ROWS; r++)
        for (int j = 0; j < BE_NR; j++) acc[r][j] = 0.0f;
    for (long k = 0; k < K; k++) {
        const int8_t *qk = q + k * BE_NR;
        const float a0 = ar[0][k * csa], a1 = ar[1][k * csa], a2 = ar[2][k * csa], a3 = ar[3][k * csa];
        for (int j = 0; j < BE_NR; j++) {
            const float wj = ((float)qk[j] - z[j]) * s[j];
            acc[0][j] += a0 * wj;
            acc[1][j] += a1 * wj;
            acc[2][j] += a2 * wj;
            acc[3][j] += a3 * wj;
        }
    }
}
