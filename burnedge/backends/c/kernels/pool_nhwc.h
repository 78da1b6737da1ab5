/* Global pools over a channels-last (NHWC) input: the classifier head after a conv stack that keeps NHWC to the
 * end. The output (N, C) is the same bytes in NCHW and NHWC. */
#ifndef BURNEDGE_POOL_NHWC_H
#define BURNEDGE_POOL_NHWC_H

#include "burnedge.h"

/* y[n*C + c] = mean (max) over the `size` pixels p of x[(n*size + p)*C + c] */
void be_global_avgpool_nhwc_f32(const float *x, float *y, long n, long size, long c, int threads);
void be_global_maxpool_nhwc_f32(const float *x, float *y, long n, long size, long c, int threads);

#endif
