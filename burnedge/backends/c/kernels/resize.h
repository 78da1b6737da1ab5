/* Resampling kernels for Resize / Upsample (linear, cubic, antialiased): one axis per call. See resize.c. */
#ifndef BURNEDGE_RESIZE_H
#define BURNEDGE_RESIZE_H

#include <stdint.h>

/* in viewed as [outer, n_in, inner], out as [outer, n_out, inner]:
 * out[o, j, :] = sum_t w[j*k + t] * in[o, idx[j*k + t], :], or `extrap` everywhere when idx[j*k] < 0 */
void be_resize_axis_f32(float *out, const float *in, int64_t outer, int64_t n_in, int64_t n_out, int64_t inner,
                        int k, const int32_t *idx, const float *w, float extrap, int threads);

#endif
