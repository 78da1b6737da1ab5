/* Sampling kernels that read the input at run-time positions: RoiAlign (roi_align.c) and DeformConv
 * (deform_conv.c). Both bilinear-interpolate x [N, C, H, W]; a run-time batch index out of range makes the kernel
 * return nonzero (the generated step returns that error) instead of reading outside the input. */
#ifndef BURNEDGE_SAMPLING_H
#define BURNEDGE_SAMPLING_H

#include <stdint.h>

/* RoiAlign of the `nr` regions rois[nr][4] (x1, y1, x2, y2, times spatial_scale, minus 0.5 when half_pixel) of
 * the images batch[nr] into y [nr, c, oh, ow]: each output bin averages (mode 0) or maximises (mode 1, the
 * largest weighted corner, as onnxruntime) a grid of sampling_ratio^2 samples (0: ceil(roi size / bins) per
 * axis); positions and weights in double */
int be_roi_align_f32(const float *x, const float *rois, const int64_t *batch, float *y, long n, long c, long h,
                     long w, long nr, long oh, long ow, long sampling_ratio, double spatial_scale, int half_pixel,
                     int mode, int threads);
int be_roi_align_f64(const double *x, const double *rois, const int64_t *batch, double *y, long n, long c, long h,
                     long w, long nr, long oh, long ow, long sampling_ratio, double spatial_scale, int half_pixel,
                     int mode, int threads);

/* DeformConv of x [n, c, sp...] (nsp = 1 to 3 spatial dims) with w [m, c / group, kernel...] into
 * y [n, m, out...]: every kernel position k of every output position l samples x at
 *   out_pos * stride - begin + kpos * dilation + offset[b, og, k, axis, l]
 * (N-linear interpolation, zero outside x), times mask[b, og, k, l] when mask is not NULL; the offset group og
 * of a channel is ch / (c / offset_groups). The samples (c * K * L doubles per image, in `cols`) are then
 * convolved like Conv, plus bias (may be NULL); everything in double. */
void be_deform_conv_f32(const float *x, const float *w, const float *offset, const float *bias, const float *mask,
                        float *y, long n, long c, long m, int nsp, const long *sp, const long *kernel,
                        const long *out, const long *strides, const long *dilations, const long *begin, long group,
                        long offset_groups, double *cols, int threads);
void be_deform_conv_f64(const double *x, const double *w, const double *offset, const double *bias,
                        const double *mask, double *y, long n, long c, long m, int nsp, const long *sp,
                        const long *kernel, const long *out, const long *strides, const long *dilations,
                        const long *begin, long group, long offset_groups, double *cols, int threads);

#endif
