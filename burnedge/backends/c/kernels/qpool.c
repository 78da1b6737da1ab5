/* int8 average pools and softmax (threads over planes / rows; integer results do not depend on them).
 *
 * QAvgPool: per output position, the taps inside the input are summed as (x - zp) in int32 and divided by the
 * product of the per-axis counts of taps inside the counting region, rounding half away from zero.
 * QGlobalAvgPool: a plane's sum of x (AVX2: _mm256_sad_epu8 on x + 128 adds 32 bytes per instruction), minus
 * zp * size, then one rounded division.
 * QSoftmax, per row: 1. the row's max; 2. e = table[max - x] and their int64 sum; 3. y = round_div(e * 256, sum)
 * - 128 clamped, the division done in double and corrected to the exact integer quotient.
 */
#include "qpool.h"

#if defined(__AVX2__) && !defined(BURNEDGE_PORTABLE)
#include <immintrin.h>
#define BE_QPOOL_AVX2 1
#endif

static inline int8_t clamp8(int64_t v) { return (int8_t)(v < -128 ? -128 : (v > 127 ? 127 : v)); }

/* taps k in [a, b) of a window starting at p0 (step d, K taps) that fall inside [lo, hi) */
static inline void taps(int p0, int K, int d, int lo, int hi, int *a, int *b) {
    int k0 = 0, k1 = K;
    while (k0 < K && p0 + k0 * d < lo) k0++;
    while (k1 > k0 && p0 + (k1 - 1) * d >= hi) k1--;
    *a = k0;
    *b = k1;
}

void be_qavgpool2d_i8(const int8_t *x, int8_t *y, long nc, int ih, int iw, int oh, int ow, int kh, int kw, int sh,
                      int sw, int dh, int dw, int ph, int pw, int clo_h, int chi_h, int clo_w, int chi_w, int32_t zp,
                      int threads) {
    const int par = threads > 1 && nc > 1 && nc * (long)oh * ow * kh * kw > 65536;
#pragma omp parallel for num_threads(threads) schedule(static) if (par)
    for (long p = 0; p < nc; p++) {
        const int8_t *xp = x + p * ih * iw;
        int8_t *yp = y + p * oh * ow;
        for (int oy = 0; oy < oh; oy++) {
            const int y0 = oy * sh - ph;
            int ya, yb, ca, cb;
            taps(y0, kh, dh, 0, ih, &ya, &yb);
            taps(y0, kh, dh, clo_h, chi_h, &ca, &cb);
            for (int ox = 0; ox < ow; ox++) {
                const int x0 = ox * sw - pw;
                int xa, xb, da, db;
                taps(x0, kw, dw, 0, iw, &xa, &xb);
                taps(x0, kw, dw, clo_w, chi_w, &da, &db);
                int32_t s = 0;
                for (int ky = ya; ky < yb; ky++) {
                    const int8_t *r = xp + (long)(y0 + ky * dh) * iw + x0;
                    for (int kx = xa; kx < xb; kx++) s += r[kx * dw] - zp;
                }
                const int64_t cnt = (int64_t)(cb - ca) * (db - da);
                yp[(long)oy * ow + ox] = cnt > 0 ? clamp8(zp + be_round_div(s, cnt)) : (int8_t)zp;
            }
        }
    }
}

static int64_t plane_sum(const int8_t *x, long n) {
    long i = 0;
    int64_t s = 0;
#ifdef BE_QPOOL_AVX2
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
#endif
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

/* round_div(a, n) for 0 <= a < 2^53, 0 < n < 2^53: a double quotient corrected to the exact floor */
static inline int64_t div_pos(int64_t a, int64_t n) {
    const int64_t num = a + n / 2;
    int64_t q = (int64_t)((double)num / (double)n);
    while (q > 0 && q * n > num) q--;
    while ((q + 1) * n <= num) q++;
    return q;
}

void be_qsoftmax_i8(const int8_t *x, int8_t *y, long outer, long n, long inner, const int32_t *table, int threads) {
    const long rows = outer * inner;
    const int par = threads > 1 && rows > 1 && rows * n > 16384;
#pragma omp parallel for num_threads(threads) schedule(static) if (par)
    for (long r = 0; r < rows; r++) {
        const long o = r / inner, i = r % inner;
        const int8_t *xr = x + o * n * inner + i;
        int8_t *yr = y + o * n * inner + i;
        int mx = -128;
        for (long k = 0; k < n; k++) mx = xr[k * inner] > mx ? xr[k * inner] : mx;
        int64_t total = 0;
        int neg = 0;
        for (long k = 0; k < n; k++) {
            const int32_t e = table[mx - xr[k * inner]];
            total += e;
            neg |= e < 0;
        }
        if (total <= 0 || neg || total >= ((int64_t)1 << 52)) { /* outside the spec's tables: the plain rule */
            for (long k = 0; k < n; k++) {
                const int64_t e = (int64_t)table[mx - xr[k * inner]] * 256;
                yr[k * inner] = total > 0 ? clamp8(be_round_div(e, total) - 128) : (int8_t)-128;
            }
            continue;
        }
        for (long k = 0; k < n; k++) {
            const int64_t e = (int64_t)table[mx - xr[k * inner]] * 256;
            yr[k * inner] = clamp8(div_pos(e, total) - 128);
        }
    }
}
