/* Global average and max pools over NHWC inputs.
 *
 * Each image's C outputs are accumulated pixel after pixel, a whole row of channels at a time: the inner loop runs
 * over contiguous channels, so the compiler vectorises it on every target (AVX2, NEON), and each output is one sum
 * in pixel order whatever the thread count (threads split the images). The average divides the sum by size;
 * the max keeps a NaN once it has seen one, like the reference.
 */
#include "pool_nhwc.h"
#include "workers.h"

typedef struct {
    const float *x;
    float *y;
    long size, c;
} nhwc_pool_call;

static void avg_images(void *ctx, int tid, long lo, long hi) {
    const nhwc_pool_call *a = ctx;
    const float *x = a->x;
    float *y = a->y;
    const long size = a->size, c = a->c;
    (void)tid;
    for (long i = lo; i < hi; i++) {
        float *restrict yi = y + i * c;
        const float *restrict xi = x + i * size * c;
        for (long k = 0; k < c; k++) yi[k] = 0.0f;
        for (long p = 0; p < size; p++)
            for (long k = 0; k < c; k++) yi[k] += xi[p * c + k];
        for (long k = 0; k < c; k++) yi[k] /= (float)size;
    }
}

void be_global_avgpool_nhwc_f32(const float *x, float *y, long n, long size, long c, int threads) {
    nhwc_pool_call a = {x, y, size, c};
    be_parallel(threads, n, avg_images, &a);
}

static void max_images(void *ctx, int tid, long lo, long hi) {
    const nhwc_pool_call *a = ctx;
    const float *x = a->x;
    float *y = a->y;
    const long size = a->size, c = a->c;
    (void)tid;
    for (long i = lo; i < hi; i++) {
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

void be_global_maxpool_nhwc_f32(const float *x, float *y, long n, long size, long c, int threads) {
    nhwc_pool_call a = {x, y, size, c};
    be_parallel(threads, n, max_images, &a);
}
