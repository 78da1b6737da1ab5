/* CumSum and CumProd along the middle axis of [outer, n, inner] (reduce.h, misc.h), sequentially as the reference
 * accumulates; be_axis_split turns a run-time axis into that view. */
#include "burnedge.h"
#include "misc.h"
#include "reduce.h"

/* -- CumSum, CumProd ------------------------------------------------------------------------------------------ */
/* row j of the scan combines (OP) row j (inclusive) or row j-1 (exclusive) with the previous output row; ID is the
 * first row of an exclusive scan; lanes stay contiguous, so the compiler vectorises across `inner` */
#define BE_SCAN(NAME, T, AT, OP, ID)                                                                                 \
    void NAME(const T *x, T *y, long outer, long n, long inner, int exclusive, int reverse, int threads) {    \
        BE_PARALLEL_FOR(threads > 1 && outer > 1 && outer * n * inner > 32768)                                      \
        for (long o = 0; o < outer; o++) {                                                                     \
            const T *xo = x + o * n * inner;                                                                   \
            T *yo = y + o * n * inner;                                                                         \
            for (long s = 0; s < n; s++) {                                                                     \
                long j = reverse ? n - 1 - s : s, prev = reverse ? j + 1 : j - 1;                              \
                T *yj = yo + j * inner;                                                                        \
                if (s == 0) {                                                                                  \
                    for (long i = 0; i < inner; i++) yj[i] = exclusive ? (T)(ID) : xo[j * inner + i];             \
                } else {                                                                                       \
                    const T *xs = xo + (exclusive ? prev : j) * inner, *yp = yo + prev * inner;                \
                    for (long i = 0; i < inner; i++) yj[i] = (T)((AT)yp[i] OP (AT)xs[i]);                       \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    }

BE_SCAN(be_cumsum_f32, float, float, +, 0)
BE_SCAN(be_cumsum_f64, double, double, +, 0)
BE_SCAN(be_cumsum_i32, int32_t, uint32_t, +, 0)
BE_SCAN(be_cumsum_i64, int64_t, uint64_t, +, 0)
BE_SCAN(be_cumprod_f32, float, float, *, 1)
BE_SCAN(be_cumprod_f64, double, double, *, 1)
BE_SCAN(be_cumprod_i32, int32_t, uint32_t, *, 1)
BE_SCAN(be_cumprod_i64, int64_t, uint64_t, *, 1)

int be_axis_split(const long *dims, int rank, int64_t axis, long *outer, long *n, long *inner) {
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= (rank > 0 ? rank : 1)) return 0;
    *outer = 1, *n = rank > 0 ? dims[axis] : 1, *inner = 1;
    for (int i = 0; i < rank; i++) {
        if (i < axis) *outer *= dims[i];
        if (i > axis) *inner *= dims[i];
    }
    return 1;
}
