/* float32 GEMM: a 6x16 register-blocked micro-kernel and its loop (portable C; x86/gemm.c: AVX2/FMA tiles,
 * arm/gemm.c: NEON tiles, the same loop).
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
#include "gemm_portable.h"

void be_gemm_tile(long K, const float *a, long rsa, long csa, int mr, const float *b, long ldb, int nr, float *c,
                  long ldc, const be_epi *e, long i0, long j0) {
    be_gemm_tile_portable(K, a, rsa, csa, mr, b, ldb, nr, c, ldc, e, i0, j0);
}

#include "gemm_loops.h"
