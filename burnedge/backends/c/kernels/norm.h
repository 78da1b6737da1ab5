/* Normalisation kernels: Softmax / LogSoftmax, LayerNormalization, Group/InstanceNormalization, inference
 * BatchNormalization (a per-channel affine map), LpNormalization. Inputs are seen as [outer, n, inner]; the
 * middle axis is normalised. `_portable` variants never use SIMD (for tests). */
#ifndef BURNEDGE_NORM_H
#define BURNEDGE_NORM_H

#include <stdint.h>

/* softmax (log_ = 0) or log-softmax (log_ = 1) over the middle axis */
void be_softmax_f32(const float *x, float *y, long outer, long n, long inner, int log_, int threads);
void be_softmax_f32_portable(const float *x, float *y, long outer, long n, long inner, int log_, int threads);

/* rows of length d: y = (x - mean) / sqrt(var + eps) * scale + bias (bias may be NULL); mean and inv_std (may be
 * NULL) receive the per-row statistics */
void be_layernorm_f32(const float *x, float *y, const float *scale, const float *bias, float *mean, float *inv_std,
                      long rows, long d, float eps, int threads);
void be_layernorm_f32_portable(const float *x, float *y, const float *scale, const float *bias, float *mean,
                               float *inv_std, long rows, long d, float eps, int threads);

/* x: [n, groups * cpg, size]; statistics per (n, group), scale and bias per channel (groups * cpg values) */
void be_groupnorm_f32(const float *x, float *y, const float *scale, const float *bias, long n, long groups,
                      long cpg, long size, float eps, int threads);
void be_groupnorm_f32_portable(const float *x, float *y, const float *scale, const float *bias, long n,
                               long groups, long cpg, long size, float eps, int threads);

/* x: [n, c, size]; y = x * k[c] + b[c] */
void be_channel_affine_f32(const float *x, float *y, const float *k, const float *b, long n, long c, long size,
                           int threads);

/* x / ||x||_p along the middle axis (p = 1 or 2); a zero vector stays zero */
void be_lpnorm_f32(const float *x, float *y, long outer, long n, long inner, int p, int threads);

#endif
