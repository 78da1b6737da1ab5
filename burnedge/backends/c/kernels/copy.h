/* Data movement: N-d strided copy, pattern fill, table-driven copy (Pad, nearest Resize). See copy.c. */
#ifndef BURNEDGE_COPY_H
#define BURNEDGE_COPY_H

#include <stdint.h>

/* out[sum i_d * out_strides[d]] = in[sum i_d * in_strides[d]] for every index i of `shape` (ndim 1..8).
 * Strides count elements of `elem` bytes (1, 2, 4 or 8) and may be 0 (broadcast) or negative (reversed). */
void be_copy_nd(void *out, const void *in, int elem, int ndim, const int64_t *shape, const int64_t *out_strides,
                const int64_t *in_strides, int threads);

/* out[0..n) = *value, elements of `elem` bytes (1, 2, 4 or 8) */
void be_fill(void *out, const void *value, int elem, int64_t n);

/* Dense out of `shape`: out[i] = in[sum_d tables_d[i_d]], or *fill where any tables_d[i_d] < 0. `tables` holds
 * one table per dim, back to back (shape[0] entries, then shape[1] ...), in elements of the input. Along the last
 * dim, entries [inner_lo, inner_hi) are known to be consecutive (copied with memcpy). */
void be_copy_table_nd(void *out, const void *in, int elem, int ndim, const int64_t *shape, const int64_t *tables,
                      int64_t inner_lo, int64_t inner_hi, const void *fill, int threads);

#endif
