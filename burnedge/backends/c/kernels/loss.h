/* Loss kernels: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss over x [n, c, d] (d = prod(d1..dk), 1 for
 * [N, C] inputs) with targets [n, d] (int32 or int64). `weight` (c values) may be NULL; a target equal to
 * `ignore_index` (when has_ii) contributes 0 with weight 0. reduction: BE_LOSS_NONE writes n * d losses,
 * BE_LOSS_SUM / BE_LOSS_MEAN one value (mean: the sum divided by the sum of the weights taken). */
#ifndef BURNEDGE_LOSS_H
#define BURNEDGE_LOSS_H

#include <stdint.h>

enum { BE_LOSS_NONE = 0, BE_LOSS_SUM = 1, BE_LOSS_MEAN = 2 };

/* NLL of log-probabilities x: loss[i, j] = -x[i, target[i, j], j] * weight[target[i, j]] */
#define BE_NLL_DECL(NAME, T, IT)                                                                            \
    void NAME(const T *x, const IT *target, const T *weight, T *loss, long n, long c, long d, long ignore_index, \
              int has_ii, int reduction, int threads);
BE_NLL_DECL(be_nll_loss_f32_i32, float, int32_t)
BE_NLL_DECL(be_nll_loss_f32_i64, float, int64_t)
BE_NLL_DECL(be_nll_loss_f64_i32, double, int32_t)
BE_NLL_DECL(be_nll_loss_f64_i64, double, int64_t)
#undef BE_NLL_DECL

/* the same NLL of log_softmax(x, axis 1), computed in double; log_prob (n * c * d values, may be NULL) receives
 * the log-softmax */
#define BE_SCE_DECL(NAME, T, IT)                                                                               \
    void NAME(const T *x, const IT *target, const T *weight, T *loss, T *log_prob, long n, long c, long d,       \
              long ignore_index, int has_ii, int reduction, int threads);
BE_SCE_DECL(be_sce_loss_f32_i32, float, int32_t)
BE_SCE_DECL(be_sce_loss_f32_i64, float, int64_t)
BE_SCE_DECL(be_sce_loss_f64_i32, double, int32_t)
BE_SCE_DECL(be_sce_loss_f64_i64, double, int64_t)
#undef BE_SCE_DECL

#endif
