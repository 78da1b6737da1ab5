/* Loss kernels (loss.h): NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, as burnedge/ops/loss.py.
 *
 * Position (i, j) of the [n, d] targets has class t = target[i * d + j]; it is ignored (weight 0) when has_ii and
 * t == ignore_index; the class read is t clamped to [0, c - 1] (the reference's clip: an out-of-range target
 * never reads outside x); its weight is weight[class] (1 without weights); its loss is -logp[i, class, j] * w.
 * SoftmaxCrossEntropyLoss takes logp = x - max - log(sum(exp(x - max))) over the classes, in double.
 * reduction none: one thread per batch row writes its losses; sum and mean: one pass in a fixed order with double
 * accumulators (the mean divides by the sum of the weights: 0 / 0 = NaN when every target is ignored).
 */
#include "burnedge.h"
#include "loss.h"

/* the class position (i, j) reads and its weight */
static inline long be__loss_class(long t, long c, long ignore_index, int has_ii, const void *weight, int f64,
                                  double *w) {
    long k = t < 0 ? 0 : (t > c - 1 ? c - 1 : t);
    if (has_ii && t == ignore_index)
        *w = 0.0;
    else if (weight == NULL)
        *w = 1.0;
    else
        *w = f64 ? ((const double *)weight)[k] : (double)((const float *)weight)[k];
    return k;
}

/* log(sum(exp(x - m))) and m over the c classes of position j (stride d) */
#define BE_LSE(T)                                                                                              \
    static inline double be__lse_##T(const T *xi, long c, long d, double *m) {                                \
        double mx = -INFINITY, s = 0.0;                                                                        \
        for (long k = 0; k < c; k++) mx = (double)xi[k * d] > mx ? (double)xi[k * d] : mx;                     \
        for (long k = 0; k < c; k++) s += exp((double)xi[k * d] - mx);                                         \
        *m = mx;                                                                                               \
        return log(s);                                                                                         \
    }
BE_LSE(float)
BE_LSE(double)

/* LOGP(xi, k, j): the log-probability of class k at position j of batch row xi (= x + i * c * d) */
#define BE_LOSS_LOOP(T, IT, F64, PREP, LOGP)                                                                   \
    double total = 0.0, wsum = 0.0;                                                                            \
    if (reduction == BE_LOSS_NONE) {                                                                           \
        BE_PARALLEL_FOR(threads > 1 && n > 1 && n * c * d > 32768)                                             \
        for (long i = 0; i < n; i++) {                                                                         \
            const T *xi = x + i * c * d;                                                                       \
            for (long j = 0; j < d; j++) {                                                                     \
                double w, m = 0.0, ls = 0.0;                                                                   \
                long k = be__loss_class((long)target[i * d + j], c, ignore_index, has_ii, weight, F64, &w);    \
                PREP;                                                                                          \
                loss[i * d + j] = (T)(-(LOGP) * w);                                                            \
            }                                                                                                  \
        }                                                                                                      \
        return;                                                                                                \
    }                                                                                                          \
    for (long i = 0; i < n; i++) {                                                                             \
        const T *xi = x + i * c * d;                                                                           \
        for (long j = 0; j < d; j++) {                                                                         \
            double w, m = 0.0, ls = 0.0;                                                                       \
            long k = be__loss_class((long)target[i * d + j], c, ignore_index, has_ii, weight, F64, &w);        \
            PREP;                                                                                              \
            total += -(LOGP) * w;                                                                              \
            wsum += w;                                                                                         \
        }                                                                                                      \
    }                                                                                                          \
    loss[0] = (T)(reduction == BE_LOSS_MEAN ? total / wsum : total);

#define BE_NLL(NAME, T, IT, F64)                                                                               \
    void NAME(const T *x, const IT *target, const T *weight, T *loss, long n, long c, long d, long ignore_index, \
              int has_ii, int reduction, int threads) {                                                        \
        (void)threads;                                                                                         \
        BE_LOSS_LOOP(T, IT, F64, (void)m; (void)ls, (double)xi[k * d + j])                                     \
    }
BE_NLL(be_nll_loss_f32_i32, float, int32_t, 0)
BE_NLL(be_nll_loss_f32_i64, float, int64_t, 0)
BE_NLL(be_nll_loss_f64_i32, double, int32_t, 1)
BE_NLL(be_nll_loss_f64_i64, double, int64_t, 1)

/* the log-softmax of every class at position j goes to log_prob when it is wanted */
#define BE_SCE(NAME, T, IT, F64)                                                                               \
    void NAME(const T *x, const IT *target, const T *weight, T *loss, T *log_prob, long n, long c, long d,       \
              long ignore_index, int has_ii, int reduction, int threads) {                                     \
        (void)threads;                                                                                         \
        if (log_prob != NULL) {                                                                                \
            BE_PARALLEL_FOR(threads > 1 && n > 1 && n * c * d > 32768)                                         \
            for (long i = 0; i < n; i++) {                                                                     \
                const T *xi = x + i * c * d;                                                                   \
                T *li = log_prob + i * c * d;                                                                  \
                for (long j = 0; j < d; j++) {                                                                 \
                    double m, ls = be__lse_##T(xi + j, c, d, &m);                                              \
                    for (long k = 0; k < c; k++) li[k * d + j] = (T)(((double)xi[k * d + j] - m) - ls);        \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
        BE_LOSS_LOOP(T, IT, F64, ls = be__lse_##T(xi + j, c, d, &m), (((double)xi[k * d + j] - m) - ls))       \
    }
BE_SCE(be_sce_loss_f32_i32, float, int32_t, 0)
BE_SCE(be_sce_loss_f32_i64, float, int64_t, 0)
BE_SCE(be_sce_loss_f64_i32, double, int32_t, 1)
BE_SCE(be_sce_loss_f64_i64, double, int64_t, 1)
