/* int8 global average pools: burnedge.QGlobalAvgPool, NCHW and channels-last (threads over planes).
 *
 * A plane's sum of x (AVX2: _mm256_sad_epu8 on x + 128 adds 32 bytes per instruction), minus zp * size, then
 * one rounded division.
 */
#include "qpool.h"
#include "x86_simd.h"

static inline int8_t clamp8(int64_t v) { return (int8_t)(v < -128 ? -128 : (v > 127 ? 127 : v)); }

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

void be_qglobal_avgpool_i8(const int8_t *x, int8_t *y, long nc, long size, int32_t zp, int threads) {
    const int par = threads > 1 && nc > 1 && nc * size > 65536;
#pragma omp parallel for num_threads(threads) schedule(static) if (par)
    for (long p = 0; p < nc; p++) {
        const int64_t s = plane_sum(x + p * size, size) - (int64_t)zp * size;
        y[p] = size > 0 ? clamp8(zp + be_round_div(s, size)) : (int8_t)zp;
    }
}

/* channels-last: int32 sums of 256 channels at a time along the pixels (exact below 2^23 pixels) */
void be_qglobal_avgpool_nhwc_i8(const int8_t *x, int8_t *y, long n, long size, long c, int32_t zp) {
    int32_t acc[256];
    for (long i = 0; i < n; i++)
        for (long c0 = 0; c0 < c; c0 += 256) {
            const long w = c - c0 < 256 ? c - c0 : 256;
            const int8_t *xi = x + i * size * c + c0;
            for (long k = 0; k < w; k++) acc[k] = 0;
            for (long p = 0; p < size; p++)
                for (long k = 0; k < w; k++) acc[k] += xi[p * c + k];
            for (long k = 0; k < w; k++) {
                const int64_t s = (int64_t)acc[k] - (int64_t)zp * size;
                y[i * c + c0 + k] = size > 0 ? clamp8(zp + be_round_div(s, size)) : (int8_t)zp;
            }
        }
}
