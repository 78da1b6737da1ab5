/* float64 LogSumExp over the middle axis (misc.h), as the reference computes it: the lane's maximum m (0 when it
 * is not finite) is subtracted before exp and added back after log. */
#include "burnedge.h"
#include "misc.h"

void be_reduce_lse_f64(const double *x, double *y, long outer, long n, long inner, int threads) {
    BE_PARALLEL_FOR(threads > 1 && outer * inner > 1 && outer * n * inner > 32768)
    for (long lane = 0; lane < outer * inner; lane++) {
        long o = lane / inner, i = lane % inner;
        const double *xl = x + o * n * inner + i;
        double m = -INFINITY, s = 0.0;
        for (long j = 0; j < n; j++) m = xl[j * inner] > m ? xl[j * inner] : m;
        if (!isfinite(m)) m = 0.0;
        for (long j = 0; j < n; j++) s += exp(xl[j * inner] - m);
        y[lane] = log(s) + m;
    }
}
