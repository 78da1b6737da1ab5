/* Smaller kernels of the C backend: Trilu, CumSum/CumProd with a run-time axis, Hardmax, ScatterElements, LpPool,
 * GridSample and the float64 LogSumExp reduction.
 *
 * Layouts follow reduce.h ([outer, n, inner] around one axis); kernels that read a value known only at run time
 * (an axis, an index) return 0 on success and nonzero when that value is out of range, and the generated step
 * returns that error instead of writing garbage. */
#ifndef BURNEDGE_MISC_H
#define BURNEDGE_MISC_H

#include <stdint.h>

/* (outer, n, inner) of `dims` (rank values) around `axis` (negative counts from the end); 0 when out of range */
int be_axis_split(const long *dims, int rank, int64_t axis, long *outer, long *n, long *inner);

/* CumProd along the middle axis of [outer, n, inner], in the input type (integers wrap); see be_cumsum_* */
void be_cumprod_f32(const float *x, float *y, long outer, long n, long inner, int exclusive, int reverse,
                    int threads);
void be_cumprod_f64(const double *x, double *y, long outer, long n, long inner, int exclusive, int reverse,
                    int threads);
void be_cumprod_i32(const int32_t *x, int32_t *y, long outer, long n, long inner, int exclusive, int reverse,
                    int threads);
void be_cumprod_i64(const int64_t *x, int64_t *y, long outer, long n, long inner, int exclusive, int reverse,
                    int threads);

/* Trilu over `batch` matrices [rows, cols] of `esize`-byte elements: keeps col - row >= k (upper) or <= k
 * (lower), zero bytes elsewhere; x may equal y */
void be_trilu(const uint8_t *x, uint8_t *y, long batch, long rows, long cols, int64_t k, int upper, long esize);

/* Hardmax along the middle axis: 1 at the first largest value of each lane (a NaN wins, as argmax), else 0 */
void be_hardmax_f32(const float *x, float *y, long outer, long n, long inner, int threads);

/* ScatterElements: y = data, then y[..., idx, ...] (idx at `axis`) combined with each update in index order.
 * `idims` are the dims of indices and updates, `ddims` those of data; indices are int64 (idx64) or int32.
 * reduction: enum be_scatter_reduction of gather.h. Returns nonzero for an index out of range. */
int be_scatter_elements_f32(const float *data, const void *idx, int idx64, const float *upd, float *y,
                            const long *ddims, const long *idims, int rank, int axis, int reduction);
int be_scatter_elements_i32(const int32_t *data, const void *idx, int idx64, const int32_t *upd, int32_t *y,
                            const long *ddims, const long *idims, int rank, int axis, int reduction);
int be_scatter_elements_i64(const int64_t *data, const void *idx, int idx64, const int64_t *upd, int64_t *y,
                            const long *ddims, const long *idims, int rank, int axis, int reduction);

/* LpPool over nc planes of up to 3 spatial dims (1-D and 2-D padded with leading 1s): geo holds, per dim d of 3,
 * {in, out, kernel, stride, dilation, pad begin} at geo[6 * d ...]; taps outside the input count as 0;
 * y = (sum |x|^p)^(1/p), summed in double */
void be_lppool_f32(const float *x, float *y, long nc, const long *geo, double p, int threads);

/* GridSample of x [n, c, dims...] (r = 1 to 3 spatial dims) at `points` grid points per batch (grid [n, points, r],
 * coordinates innermost dim first): y [n, c, points]. mode: 0 nearest, 1 linear, 2 cubic; pad: 0 zeros, 1 border,
 * 2 reflection. Returns nonzero for a rank it cannot take. */
int be_grid_sample_f32(const float *x, const float *grid, float *y, long n, long c, int r, const long *dims,
                       long points, int mode, int pad, int align, int threads);
int be_grid_sample_f64(const double *x, const double *grid, double *y, long n, long c, int r, const long *dims,
                       long points, int mode, int pad, int align, int threads);

/* log(sum(exp(x))) over the middle axis in double, shifted by the lane's maximum; -inf for an empty lane */
void be_reduce_lse_f64(const double *x, double *y, long outer, long n, long inner, int threads);

#endif
