/* Weight-only int8 dense (dense_w8.h; reference/dense_w8.c has the algorithm): the GEMV tile in AVX2. Per weight
 * row, 16 int8 levels become two 8-lane float vectors ((q - zero) * scale, the reference's exact floats) that meet
 * the 4 rows' broadcast activations in 8 FMA accumulators (one row: even and odd k apart, for the FMA latency). */
#include "dense_w8_loops.h"
#include "x86_dense.h"

/* 16 int8 levels of weight row k as floats: w0 (columns 0-7), w1 (8-15) */
#define W8_DEQUANT(k)                                                                                            \
    const __m128i qk = _mm_loadu_si128((const __m128i *)(q + (k) * BE_NR));                                     \
    const __m256 w0 = _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(qk)), z0), s0);       \
    const __m256 w1 =                                                                                            \
        _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(qk, 8))), z1), s1)

static void gemv_w8_panel(const float *const *ar, int mr, long csa, long K, const int8_t *q, const float *s,
                          const float *z, float acc[W8_ROWS][BE_NR]) {
    const __m256 s0 = _mm256_loadu_ps(s), s1 = _mm256_loadu_ps(s + 8);
    const __m256 z0 = _mm256_loadu_ps(z), z1 = _mm256_loadu_ps(z + 8);
    if (mr == 1) { /* a GEMV: even and odd k in their own accumulators, summed at the end */
        __m256 c0 = _mm256_setzero_ps(), c1 = c0, d0 = c0, d1 = c0;
        const float *a = ar[0];
        long k = 0;
        for (; k + 2 <= K; k += 2) {
            {
                W8_DEQUANT(k);
                const __m256 av = _mm256_broadcast_ss(a + k * csa);
                c0 = _mm256_fmadd_ps(av, w0, c0);
                c1 = _mm256_fmadd_ps(av, w1, c1);
            }
            {
                W8_DEQUANT(k + 1);
                const __m256 av = _mm256_broadcast_ss(a + (k + 1) * csa);
                d0 = _mm256_fmadd_ps(av, w0, d0);
                d1 = _mm256_fmadd_ps(av, w1, d1);
            }
        }
        if (k < K) {
            W8_DEQUANT(k);
            const __m256 av = _mm256_broadcast_ss(a + k * csa);
            c0 = _mm256_fmadd_ps(av, w0, c0);
            c1 = _mm256_fmadd_ps(av, w1, c1);
        }
        _mm256_storeu_ps(acc[0], _mm256_add_ps(c0, d0));
        _mm256_storeu_ps(acc[0] + 8, _mm256_add_ps(c1, d1));
        return;
    }
    __m256 c[W8_ROWS][2];
    for (int r = 0; r < W8_ROWS; r++) c[r][0] = c[r][1] = _mm256_setzero_ps();
    for (long k = 0; k < K; k++) {
        W8_DEQUANT(k);
        for (int r = 0; r < W8_ROWS; r++) {
            const __m256 av = _mm256_broadcast_ss(ar[r] + k * csa);
            c[r][0] = _mm256_fmadd_ps(av, w0, c[r][0]);
            c[r][1] = _mm256_fmadd_ps(av, w1, c[r][1]);
        }
    }
    for (int r = 0; r < W8_ROWS; r++) {
        _mm256_storeu_ps(acc[r], c[r][0]);
        _mm256_storeu_ps(acc[r] + 8, c[r][1]);
    }
}
