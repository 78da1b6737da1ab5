/* Pooling kernels: MaxPool, AveragePool (NCHW, 1D as one row), GlobalAveragePool, GlobalMaxPool.
 *
 * Windowed pools, per plane and output row (separable, "vertical first"):
 *   1. the kernel rows of this output row that fall inside the input are reduced (max or sum) column by column
 *      into a row buffer that also holds the left/right padding (-inf / lowest for max, 0 for sums);
 *   2. each output of the row reduces kernel-width taps of that buffer: stride 1 walks it contiguously (the
 *      compiler vectorises it), stride 2 deinterleaves even columns with AVX2, other strides are scalar;
 *   3. averages divide by the count of taps inside the counting region (rows times columns: it is a box).
 * Rows wider than the buffer take a direct path that visits the valid taps of each window.
 * Planes are independent: threads split them, each output written by one thread.
 * Global pools reduce each plane with 8 (AVX2: 32) independent accumulators.
 */
#include "burnedge.h"
#include "pool.h"
#include "pool_loops.h"

/* float horizontal step; `sum` picks add over max */
static void be__horiz_f32(const float *buf, float *y, int ow, int kw, int sw, int dw, int sum, int simd) {
    (void)simd;
    (sum ? be__hsum_f32 : be__hmax_f32)(buf, y, ow, kw, sw, dw);
}

static float be__plane_sum(const float *x, long n, int simd) {
    long i = 0;
    float s = 0.0f;
    (void)simd;
    float acc[8] = {0};
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) acc[k] += x[i + k];
    for (; i < n; i++) acc[0] += x[i];
    return s + ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

static float be__plane_max(const float *x, long n, int simd) {
    long i = 0;
    float m = -INFINITY;
    (void)simd;
    for (; i < n; i++) m = BE_MAX(x[i], m);
    return m;
}
