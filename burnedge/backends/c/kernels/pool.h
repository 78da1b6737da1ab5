/* Pooling kernels: MaxPool / AveragePool over NCHW planes (1D is 2D with one row), GlobalAveragePool and
 * GlobalMaxPool. Windows are given by kernel size, stride, dilation and the begin pad (may be negative: a crop);
 * the output size fixes how far windows reach past the end. Positions outside the input never count for max.
 * Average: `clo_* .. chi_*` is the region whose positions count in the divisor (the input alone, or the input
 * with its explicit pads when count_include_pad). `_portable` variants never use SIMD (for tests). */
#ifndef BURNEDGE_POOL_H
#define BURNEDGE_POOL_H

#include <stdint.h>

/* the kernel taps [*a, *b) of the window starting at `start` (step d, k taps) whose positions lie in [lo, hi)
 * (pool_loops.h, pool_nhwc.c) */
static inline void be__taps(int start, int k, int d, int lo, int hi, int *a, int *b) {
    int i = 0, j = k;
    while (i < k && start + i * d < lo) i++;
    while (j > i && start + (j - 1) * d >= hi) j--;
    *a = i;
    *b = j;
}

void be_maxpool2d_f32(const float *x, float *y, long nc, int ih, int iw, int oh, int ow, int kh, int kw, int sh,
                      int sw, int dh, int dw, int ph, int pw, int threads);
void be_maxpool2d_f32_portable(const float *x, float *y, long nc, int ih, int iw, int oh, int ow, int kh, int kw,
                               int sh, int sw, int dh, int dw, int ph, int pw, int threads);
void be_maxpool2d_i8(const int8_t *x, int8_t *y, long nc, int ih, int iw, int oh, int ow, int kh, int kw, int sh,
                     int sw, int dh, int dw, int ph, int pw, int threads);
void be_maxpool2d_u8(const uint8_t *x, uint8_t *y, long nc, int ih, int iw, int oh, int ow, int kh, int kw, int sh,
                     int sw, int dh, int dw, int ph, int pw, int threads);

void be_avgpool2d_f32(const float *x, float *y, long nc, int ih, int iw, int oh, int ow, int kh, int kw, int sh,
                      int sw, int dh, int dw, int ph, int pw, int clo_h, int chi_h, int clo_w, int chi_w,
                      int threads);
void be_avgpool2d_f32_portable(const float *x, float *y, long nc, int ih, int iw, int oh, int ow, int kh, int kw,
                               int sh, int sw, int dh, int dw, int ph, int pw, int clo_h, int chi_h, int clo_w,
                               int chi_w, int threads);

/* 3-D MaxPool (is_max) or AveragePool of nc NCDHW volumes (pool3d.c). g holds 8 triples (depth, height, width):
 * input size, output size, kernel, stride, dilation, begin pad, and the counting region's [clo, chi). */
void be_pool3d_f32(const float *x, float *y, long nc, const int *g, int is_max, int threads);

void be_global_avgpool_f32(const float *x, float *y, long nc, long size, int threads);
void be_global_avgpool_f32_portable(const float *x, float *y, long nc, long size, int threads);
void be_global_maxpool_f32(const float *x, float *y, long nc, long size, int threads);
void be_global_maxpool_f32_portable(const float *x, float *y, long nc, long size, int threads);
void be_global_maxpool_i8(const int8_t *x, int8_t *y, long nc, long size, int threads);
void be_global_maxpool_u8(const uint8_t *x, uint8_t *y, long nc, long size, int threads);

#endif
