/* float64 reductions over the middle axis, in double as the reference computes them: LogSumExp (misc.h), where
 * the lane's maximum m (0 when it is not finite) is subtracted before exp and added back after log, and the other
 * Reduce* kinds (reduce.h). */
#include "burnedge.h"
#include "workers.h"
#include "misc.h"
#include "reduce.h"

typedef struct {
    const double *x;
    double *y;
    long n, inner;
} lse_call;

/* lanes lo_ .. hi_-1 */
static void lse_lanes(void *ctx_, int tid, long lo_, long hi_) {
    const lse_call *c_ = ctx_;
    const double *x = c_->x;
    double *y = c_->y;
    const long n = c_->n, inner = c_->inner;
    (void)tid;
    for (long lane = lo_; lane < hi_; lane++) {
        long o = lane / inner, i = lane % inner;
        const double *xl = x + o * n * inner + i;
        double m = -INFINITY, s = 0.0;
        for (long j = 0; j < n; j++) m = xl[j * inner] > m ? xl[j * inner] : m;
        if (!isfinite(m)) m = 0.0;
        for (long j = 0; j < n; j++) s += exp(xl[j * inner] - m);
        y[lane] = log(s) + m;
    }
}

void be_reduce_lse_f64(const double *x, double *y, long outer, long n, long inner, int threads) {
    const int par = threads > 1 && outer * inner > 1 && outer * n * inner > 32768;
    lse_call c_ = {x, y, n, inner};
    be_parallel(par ? threads : 1, outer * inner, lse_lanes, &c_);
}


typedef struct {
    const double *x;
    double *y;
    long n, inner;
    int pre, comb, post;
    double divisor, id;
} reduce_call;

/* lanes lo_ .. hi_-1 */
static void reduce_lanes(void *ctx_, int tid, long lo_, long hi_) {
    const reduce_call *c_ = ctx_;
    const double *x = c_->x;
    double *y = c_->y;
    const long n = c_->n, inner = c_->inner;
    const int pre = c_->pre, comb = c_->comb, post = c_->post;
    const double divisor = c_->divisor, id = c_->id;
    (void)tid;
    for (long lane = lo_; lane < hi_; lane++) {
        long o = lane / inner, i = lane % inner;
        const double *xl = x + o * n * inner + i;
        double acc = id;
        for (long j = 0; j < n; j++) {
            double v = xl[j * inner];
            v = pre == BE_PRE_ABS ? fabs(v) : pre == BE_PRE_SQUARE ? v * v : v;
            if (comb == BE_RED_MAX) acc = (v > acc || v != v || acc != acc) ? (acc != acc ? acc : v) : acc;
            else if (comb == BE_RED_MIN) acc = (v < acc || v != v || acc != acc) ? (acc != acc ? acc : v) : acc;
            else if (comb == BE_RED_PROD) acc *= v;
            else acc += v;
        }
        y[lane] = post == BE_POST_SQRT ? sqrt(acc) : post == BE_POST_LOG ? log(acc)
                  : post == BE_POST_DIV ? acc / divisor : acc;
    }
}

void be_reduce_f64(const double *x, double *y, long outer, long n, long inner, int pre, int comb, int post,
                   double divisor, int threads) {
    double id = comb == BE_RED_MAX ? -INFINITY : comb == BE_RED_MIN ? INFINITY : comb == BE_RED_PROD ? 1.0 : 0.0;
    const int par = threads > 1 && outer * inner > 1 && outer * n * inner > 32768;
    reduce_call c_ = {x, y, n, inner, pre, comb, post, divisor, id};
    be_parallel(par ? threads : 1, outer * inner, reduce_lanes, &c_);
}

