/* RMSNormalization: rows of length d scaled by the inverse root of their mean square. */
#ifndef BURNEDGE_RMSNORM_H
#define BURNEDGE_RMSNORM_H

/* rows of length d: y = x / sqrt(mean(x^2) + eps) * scale (scale: d values) */
void be_rmsnorm_f32(const float *x, float *y, const float *scale, long rows, long d, float eps, int threads);

#endif
