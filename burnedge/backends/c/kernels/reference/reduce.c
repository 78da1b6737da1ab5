/* Reduction kernels over [outer, n, inner]: Reduce*, ArgMax/ArgMin, TopK, CumSum.
 *
 * Reduce (float):
 *   1. a contiguous row (inner == 1) is reduced with 32 (AVX2) or 8 (portable) independent accumulators,
 *      summed pairwise at the end; max/min carry a NaN flag so that NaN propagates as in numpy;
 *   2. otherwise lanes are reduced in blocks of 256: the output block starts at the identity and each of the n
 *      input rows is combined into it (a contiguous loop the compiler vectorises);
 *   3. LogSumExp takes the lane maximum m (0 when not finite), then log(sum(exp(x - m))) + m, as the reference;
 *   4. post: sqrt (L2), log (LogSum), or a division by the element count (Mean).
 * Integers accumulate in the unsigned type so that sums and products wrap like numpy's, without C overflow.
 * ArgMax/TopK/CumSum walk each lane in index order; lanes are independent, so threads split them.
 */
#include "burnedge.h"
#include "reduce.h"

static inline float be__hsum8(const float *a); /* reduce_loops.h */

/* sum of pre(x[0..n)) */
static float be__row_sum(const float *x, long n, int pre, int simd) {
    long i = 0;
    float s = 0.0f;
    (void)simd;
    float acc[8] = {0};
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) {
            float v = x[i + k];
            acc[k] += pre == BE_PRE_SQUARE ? v * v : pre == BE_PRE_ABS ? fabsf(v) : v;
        }
    for (; i < n; i++) {
        float v = x[i];
        acc[0] += pre == BE_PRE_SQUARE ? v * v : pre == BE_PRE_ABS ? fabsf(v) : v;
    }
    return s + be__hsum8(acc);
}

/* max (or min) of x[0..n), NaN if any is NaN; -inf (+inf) for n == 0 */
static float be__row_max(const float *x, long n, int is_min, int simd) {
    long i = 0;
    float m = is_min ? INFINITY : -INFINITY;
    int nan = 0;
    (void)simd;
    for (; i < n; i++) {
        float v = x[i];
        nan |= v != v;
        m = is_min ? (v < m ? v : m) : (v > m ? v : m);
    }
    return nan ? NAN : m;
}

#include "reduce_loops.h"
