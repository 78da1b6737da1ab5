/* Indexing kernels: Gather, GatherElements, GatherND, ScatterND. See gather.c. */
#ifndef BURNEDGE_GATHER_H
#define BURNEDGE_GATHER_H

#include <stdint.h>

/* ScatterND reductions (float32 only; BE_SCATTER_NONE works on any element size) */
enum be_scatter_reduction { BE_SCATTER_NONE = 0, BE_SCATTER_ADD, BE_SCATTER_MUL, BE_SCATTER_MAX, BE_SCATTER_MIN };

/* data viewed as [outer, n_axis, inner_bytes]: out[o, j] = data[o, idx[j]] for j < n_idx (idx int32 or int64 by
 * idx64; negative indices count from the end; an index out of range gives zeros) */
void be_gather(void *out, const void *data, const void *idx, int idx64, int64_t outer, int64_t n_axis,
               int64_t n_idx, int64_t inner_bytes, int threads);

/* out (dense over `shape`, the indices' shape) = data[i with i[axis] = idx[i]]; data_strides in elements */
void be_gather_elements(void *out, const void *data, const void *idx, int idx64, int elem, int ndim,
                        const int64_t *shape, const int64_t *data_strides, int axis, int64_t axis_dim, int threads);

/* n_batch batches of n_per index tuples of k entries: out[b, j] = the slice of slice_bytes at
 * data + b * batch_bytes + sum_m wrap(idx[b, j, m], dims[m]) * strides[m] (strides in bytes) */
void be_gather_nd(void *out, const void *data, const void *idx, int idx64, int64_t n_batch, int64_t n_per, int k,
                  const int64_t *dims, const int64_t *strides, int64_t batch_bytes, int64_t slice_bytes,
                  int threads);

/* out already holds the data: for each of n tuples in order, the slice of slice_bytes at
 * out + sum_m wrap(idx[j, m], dims[m]) * strides[m] gets updates[j] (or is reduced with it, float32) */
void be_scatter_nd(void *out, const void *updates, const void *idx, int idx64, int64_t n, int k,
                   const int64_t *dims, const int64_t *strides, int64_t slice_bytes, int reduction);

#endif
