/* Global average and max pools over NHWC inputs.
 *
 * Each image's C outputs are accumulated pixel after pixel, a whole row of channels at a time: the inner loop runs
 * over contiguous channels, so the compiler vectorises it on every target (AVX2, NEON), and each output is one sum
 * in pixel order whatever the thread count (threads split the images). The average divides the sum by size;
 * the max keeps a NaN once it has seen one, like the reference.
 */
#include "pool_nhwc.h"

void be_global_avgpool_nhwc_f32(const float *x, float *y, long n, long size, long c, int threads) {
    BE_PARALLEL_FOR(threads > 1 && n > 1)
    for (long i = 0; i < n; i++) {
        float *restrict yi = y + i * c;
        const float *restrict xi = x + i * size * c;
        for (long k = 0; k < c; k++) yi[k] = 0.0f;
        for (long p = 0; p < size; p++)
            for (long k = 0; k < c; k++) yi[k] += xi[p * c + k];
        for (long k = 0; k < c; k++) yi[k] /= (float)size;
    }
}

void be_global_maxpool_nhwc_f32(const float *x, float *y, long n, long size, long c, int threads) {
    BE_PARALLEL_FOR(threads > 1 && n > 1)
    for (long i = 0; i < n; i++) {
        float *restrict yi = y + i * c;
        const float *restrict xi = x + i * size * c;
        for (long k = 0; k < c; k++) yi[k] = xi[k];
        for (long p = 1; p < size; p++)
            for (long k = 0; k < c; k++) {
                const float m = yi[k], v = xi[p * c + k];
                yi[k] = (m != m || m >= v) ? m : v;
            }
    }
}
