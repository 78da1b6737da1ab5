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
 * With AVX-512 (BE_ISA_X86_AVX512F) the panels of a job go two at a time through a 6x32 zmm tile (x86_zmm.h).
 */
#include "gemm.h"
#include "x86_dense.h"
#include "gemm_portable.h"

/* one row: four partial sums over k (k mod 4) hide the FMA latency; a fixed order for a given K */
static void tile_1x16(long K, const float *a, long csa, const float *b, long ldb, __m256 *o0, __m256 *o1) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
    long k = 0;
    for (; k + 4 <= K; k += 4) {
        const float *bk = b + k * ldb;
        __m256 a0 = _mm256_broadcast_ss(a + k * csa), a1 = _mm256_broadcast_ss(a + (k + 1) * csa);
        __m256 a2 = _mm256_broadcast_ss(a + (k + 2) * csa), a3 = _mm256_broadcast_ss(a + (k + 3) * csa);
        s0 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(bk), s0);
        s1 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(bk + 8), s1);
        s2 = _mm256_fmadd_ps(a1, _mm256_loadu_ps(bk + ldb), s2);
        s3 = _mm256_fmadd_ps(a1, _mm256_loadu_ps(bk + ldb + 8), s3);
        s4 = _mm256_fmadd_ps(a2, _mm256_loadu_ps(bk + 2 * ldb), s4);
        s5 = _mm256_fmadd_ps(a2, _mm256_loadu_ps(bk + 2 * ldb + 8), s5);
        s6 = _mm256_fmadd_ps(a3, _mm256_loadu_ps(bk + 3 * ldb), s6);
        s7 = _mm256_fmadd_ps(a3, _mm256_loadu_ps(bk + 3 * ldb + 8), s7);
    }
    for (; k < K; k++) {
        __m256 a0 = _mm256_broadcast_ss(a + k * csa);
        s0 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(b + k * ldb), s0);
        s1 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(b + k * ldb + 8), s1);
    }
    *o0 = _mm256_add_ps(_mm256_add_ps(s0, s2), _mm256_add_ps(s4, s6));
    *o1 = _mm256_add_ps(_mm256_add_ps(s1, s3), _mm256_add_ps(s5, s7));
}

void be_gemm_tile(long K, const float *a, long rsa, long csa, int mr, const float *b, long ldb, int nr, float *c,
                  long ldc, const be_epi *e, long i0, long j0) {
    __m256 acc[BE_MR][2];
    if (mr == 1) {
        tile_1x16(K, a, csa, b, ldb, &acc[0][0], &acc[0][1]);
    } else {
        /* rows past mr re-read the last row: their results are dropped */
        const long o1 = rsa, o2 = (mr > 2 ? 2 : mr - 1) * rsa, o3 = (mr > 3 ? 3 : mr - 1) * rsa;
        const long o4 = (mr > 4 ? 4 : mr - 1) * rsa, o5 = (mr > 5 ? 5 : mr - 1) * rsa;
        __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
        __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
        const float *ap = a, *bp = b;
#pragma GCC unroll 2
        for (long k = 0; k < K; k++) {
            const __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
            __m256 av = _mm256_broadcast_ss(ap);
            c00 = _mm256_fmadd_ps(av, b0, c00);
            c01 = _mm256_fmadd_ps(av, b1, c01);
            av = _mm256_broadcast_ss(ap + o1);
            c10 = _mm256_fmadd_ps(av, b0, c10);
            c11 = _mm256_fmadd_ps(av, b1, c11);
            av = _mm256_broadcast_ss(ap + o2);
            c20 = _mm256_fmadd_ps(av, b0, c20);
            c21 = _mm256_fmadd_ps(av, b1, c21);
            av = _mm256_broadcast_ss(ap + o3);
            c30 = _mm256_fmadd_ps(av, b0, c30);
            c31 = _mm256_fmadd_ps(av, b1, c31);
            av = _mm256_broadcast_ss(ap + o4);
            c40 = _mm256_fmadd_ps(av, b0, c40);
            c41 = _mm256_fmadd_ps(av, b1, c41);
            av = _mm256_broadcast_ss(ap + o5);
            c50 = _mm256_fmadd_ps(av, b0, c50);
            c51 = _mm256_fmadd_ps(av, b1, c51);
            ap += csa;
            bp += ldb;
        }
        acc[0][0] = c00, acc[0][1] = c01, acc[1][0] = c10, acc[1][1] = c11, acc[2][0] = c20, acc[2][1] = c21;
        acc[3][0] = c30, acc[3][1] = c31, acc[4][0] = c40, acc[4][1] = c41, acc[5][0] = c50, acc[5][1] = c51;
    }
    const int n0 = nr < 8 ? nr : 8, n1 = nr - n0;
    for (int r = 0; r < mr; r++) {
        be_epi8_store(c + r * ldc, acc[r][0], e, i0 + r, j0, n0);
        if (n1 > 0) be_epi8_store(c + r * ldc + 8, acc[r][1], e, i0 + r, j0 + 8, n1);
    }
}

#ifdef BE_ISA_X86_AVX512F
#include "x86_zmm.h" /* be_gemm_tile2: two panels (6x32) on zmm */
#endif
#include "gemm_loops.h"
