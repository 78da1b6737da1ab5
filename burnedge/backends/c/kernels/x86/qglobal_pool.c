/* int8 global average pools: burnedge.QGlobalAvgPool, NCHW and channels-last (threads over planes).
 *
 * A plane's sum of x (AVX2: _mm256_sad_epu8 on x + 128 adds 32 bytes per instruction), minus zp * size, then
 * one rounded division.
 */
#include "qpool.h"
#include "x86_simd.h"

static int64_t plane_sum(const int8_t *x, long n) {
    long i = 0;
    int64_t s = 0;
    if (n >= 32) {
        const __m256i flip = _mm256_set1_epi8((char)0x80), zero = _mm256_setzero_si256();
        __m256i acc = zero;
        for (; i + 32 <= n; i += 32) {
            const __m256i v = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(x + i)), flip);
            acc = _mm256_add_epi64(acc, _mm256_sad_epu8(v, zero));
        }
        int64_t t[4];
        _mm256_storeu_si256((__m256i *)t, acc);
        s = t[0] + t[1] + t[2] + t[3] - 128 * (int64_t)i;
    }
    for (; i < n; i++) s += x[i];
    return s;
}

#include "qglobal_pool_loops.h"
