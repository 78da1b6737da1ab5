/* Global pools over a channels-last (NHWC) input: the classifier head after a conv stack that keeps NHWC to the
 * end. The output (N, C) is the same bytes in NCHW and NHWC. */
#ifndef BURNEDGE_POOL_NHWC_H
#define BURNEDGE_POOL_NHWC_H

#include "burnedge.h"

/* y[n*C + c] = mean (max) over the `size` pixels p of x[(n*size + p)*C + c] */
void be_global_avgpool_nhwc_f32(const float *x, float *y, long n, long size, long c, int threads);
void be_global_maxpool_nhwc_f32(const float *x, float *y, long n, long size, long c, int threads);

/* A windowed 2-D max pool on channels-last images, x (N, IH, IW, C) -> y (N, OH, OW, C): output pixel (oy, ox) is
 * the max over the window's taps inside the input (pad top ph, left pw; dilations dh, dw), the lowest value of the
 * type where none is; a float NaN, once met, is kept. Threads split the output rows. */
void be_maxpool2d_nhwc_f32(const float *x, float *y, long n, long c, int ih, int iw, int oh, int ow, int kh, int kw,
                           int sh, int sw, int dh, int dw, int ph, int pw, int threads);
void be_maxpool2d_nhwc_i8(const int8_t *x, int8_t *y, long n, long c, int ih, int iw, int oh, int ow, int kh, int kw,
                          int sh, int sw, int dh, int dw, int ph, int pw, int threads);

#endif
