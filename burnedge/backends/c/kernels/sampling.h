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

#endif
