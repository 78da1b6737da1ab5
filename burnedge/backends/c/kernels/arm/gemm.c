/* float32 GEMM: a 6x16 register-blocked micro-kernel (AVX2/FMA, ARM NEON, portable C fallback) and its loop.
 *
 * Algorithm:
 *  1. The output is cut into NR-wide column panels; each job is one panel and a range of MR-row panels.
 *  2. A job gets its B panel as NR contiguous floats per k: the operand itself when it is row-major with full
 *     columns (no copy), otherwise a copy into the job's thread slice of scratch (zero-padded to NR).
 *  3. For each row panel the micro-kernel runs the whole K loop with 12 ymm accumulators (6 rows x 2 vectors),
 *     each step one A broadcast per row and two B loads; no K blocking, so every output is one dot product in a
 *     fixed order whatever the thread count. NEON (arm_dense.h be_neon_tile): the same tile as 24 4-float
 *     accumulators on aarch64, as two 6x8 halves on armv7 (16 q registers); one fused multiply-add chain per
 *     output in k order.
 *  4. The epilogue (alpha, bias/C, residual, activation) is applied to the accumulators in registers and the
 *     tile is stored once; partial tiles and transcendental activations go through a small tile buffer.
 * Jobs are distributed statically over at most BE_DENSE_MAX_THREADS threads.
 */
#include "gemm.h"
#include "arm_dense.h"
#include "gemm_portable.h"

/* one row, NV vectors of columns: four partial sums over k (k mod 4) hide the FMA latency; a fixed order */
#define BE_ROW_K(p, kk)                                                                                            \
    do {                                                                                                           \
        const float32x4_t av = vld1q_dup_f32(a + (kk) * csa);                                                      \
        const float *bk = b + (kk) * ldb;                                                                          \
        s##p##0 = be_fma4(s##p##0, av, vld1q_f32(bk));                                                             \
        if (NV > 1) s##p##1 = be_fma4(s##p##1, av, vld1q_f32(bk + 4));                                             \
        if (NV > 2) s##p##2 = be_fma4(s##p##2, av, vld1q_f32(bk + 8));                                             \
        if (NV > 3) s##p##3 = be_fma4(s##p##3, av, vld1q_f32(bk + 12));                                            \
    } while (0)

static BE_AI void row_neon(long K, const float *a, long csa, const float *b, long ldb, float32x4_t *out,
                           const int NV) {
    const float32x4_t z = vdupq_n_f32(0.0f);
    float32x4_t s00 = z, s01 = z, s02 = z, s03 = z, s10 = z, s11 = z, s12 = z, s13 = z;
    float32x4_t s20 = z, s21 = z, s22 = z, s23 = z, s30 = z, s31 = z, s32 = z, s33 = z;
    long k = 0;
    for (; k + 4 <= K; k += 4) {
        BE_ROW_K(0, k);
        BE_ROW_K(1, k + 1);
        BE_ROW_K(2, k + 2);
        BE_ROW_K(3, k + 3);
    }
    for (; k < K; k++) BE_ROW_K(0, k);
    out[0] = vaddq_f32(vaddq_f32(s00, s10), vaddq_f32(s20, s30));
    if (NV > 1) out[1] = vaddq_f32(vaddq_f32(s01, s11), vaddq_f32(s21, s31));
    if (NV > 2) out[2] = vaddq_f32(vaddq_f32(s02, s12), vaddq_f32(s22, s32));
    if (NV > 3) out[3] = vaddq_f32(vaddq_f32(s03, s13), vaddq_f32(s23, s33));
}

/* aarch64: the whole 6x16 tile at once (24 accumulators); armv7: 4x8 and 2x16 passes */
void be_gemm_tile_neon(long K, const float *a, long rsa, long csa, int mr, const float *b, long ldb, int nr, float *c,
                       long ldc, const be_epi *e, long i0, long j0) {
    float32x4_t acc[32];
    const float32x4_t z = vdupq_n_f32(0.0f), zero[4] = {z, z, z, z};
    const float *ar[6]; /* rows past mr re-read the last row: their results are dropped */
    for (int r = 0; r < BE_MR; r++) ar[r] = a + (r < mr ? r : mr - 1) * rsa;
    if (mr == 1) {
        row_neon(K, a, csa, b, ldb, acc, BE_NEON_NV);
        if (BE_NEON_NV < 4 && nr > 8) row_neon(K, a, csa, b + 8, ldb, acc + 2, BE_NEON_NV);
    } else if (rsa == 1 && mr == BE_MR) { /* A panels: the 6 rows of a k are contiguous */
        be_neon_panel(K, ar, 0, csa, b, ldb, zero, acc, BE_MR, mr, nr, 0, 1);
    } else {
        be_neon_panel(K, ar, 0, csa, b, ldb, zero, acc, BE_MR, mr, nr, 0, 0);
    }
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nr; j += 4) be_epi4_store(c + r * ldc + j, acc[r * 4 + j / 4], e, i0 + r, j0 + j,
                                                     nr - j < 4 ? nr - j : 4);
}

void be_gemm_tile(long K, const float *a, long rsa, long csa, int mr, const float *b, long ldb, int nr, float *c,
                  long ldc, const be_epi *e, long i0, long j0) {
    be_gemm_tile_neon(K, a, rsa, csa, mr, b, ldb, nr, c, ldc, e, i0, j0);
}

#include "gemm_loops.h"
