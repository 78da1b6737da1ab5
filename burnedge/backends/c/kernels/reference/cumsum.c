/* CumSum along the middle axis of [outer, n, inner] (reduce.h), sequentially as the reference accumulates. */
#include "burnedge.h"
#include "reduce.h"

/* -- CumSum ---------------------------------------------------------------------------------------------------- */
/* row j of the scan adds row j (inclusive) or row j-1 (exclusive) to the previous output row; lanes stay
 * contiguous, so the compiler vectorises across `inner` */
#define BE_CUMSUM(NAME, T, AT)                                                                                 \
    void NAME(const T *x, T *y, long outer, long n, long inner, int exclusive, int reverse, int threads) {    \
        BE_PARALLEL_FOR(threads > 1 && outer > 1 && outer * n * inner > 32768)                                      \
        for (long o = 0; o < outer; o++) {                                                                     \
            const T *xo = x + o * n * inner;                                                                   \
            T *yo = y + o * n * inner;                                                                         \
            for (long s = 0; s < n; s++) {                                                                     \
                long j = reverse ? n - 1 - s : s, prev = reverse ? j + 1 : j - 1;                              \
                T *yj = yo + j * inner;                                                                        \
                if (s == 0) {                                                                                  \
                    for (long i = 0; i < inner; i++) yj[i] = exclusive ? (T)0 : xo[j * inner + i];             \
                } else {                                                                                       \
                    const T *xs = xo + (exclusive ? prev : j) * inner, *yp = yo + prev * inner;                \
                    for (long i = 0; i < inner; i++) yj[i] = (T)((AT)yp[i] + (AT)xs[i]);                       \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    }

BE_CUMSUM(be_cumsum_f32, float, float)
BE_CUMSUM(be_cumsum_f64, double, double)
BE_CUMSUM(be_cumsum_i32, int32_t, uint32_t)
BE_CUMSUM(be_cumsum_i64, int64_t, uint64_t)
