/* Indexing kernels: Gather, GatherElements, GatherND and ScatterND over raw bytes (any element type).
 *
 * Steps, for each kernel:
 *   1. read an index (int32 or int64), add the axis length when negative;
 *   2. an index still out of range cannot raise from C: the gathered slice is zeros (a scatter skips it);
 *   3. copy the addressed slice with memcpy (Gather, GatherND) or one element (GatherElements).
 * Gathers split their output rows over threads; ScatterND runs in index order on one thread so that a repeated
 * index behaves as in the reference (the last write wins, reductions apply in order).
 */
#include <string.h>

#include "burnedge.h"
#include "gather.h"
#include "workers.h"

static inline int64_t read_index(const void *idx, int idx64, int64_t i) {
    return idx64 ? ((const int64_t *)idx)[i] : (int64_t)((const int32_t *)idx)[i];
}

/* the index wrapped into [0, dim), or -1 when out of range */
static inline int64_t wrap_index(int64_t v, int64_t dim) {
    if (v < 0) v += dim;
    return v >= 0 && v < dim ? v : -1;
}

typedef struct {
    uint8_t *o;
    const uint8_t *d;
    const void *idx;
    int idx64, elem, ndim, axis, k;
    int64_t n_axis, n_idx, inner_bytes, n, axis_dim, n_per, batch_bytes, slice_bytes;
    const int64_t *shape, *strides, *dims;
} gather_call;

static void gather_rows(void *ctx, int tid, long lo, long hi) {
    const gather_call *c = ctx;
    const int64_t n_idx = c->n_idx, n_axis = c->n_axis, inner_bytes = c->inner_bytes;
    (void)tid;
    for (int64_t r = lo; r < hi; r++) {
        const int64_t a = r / n_idx, j = r % n_idx;
        const int64_t k = wrap_index(read_index(c->idx, c->idx64, j), n_axis);
        uint8_t *dst = c->o + r * inner_bytes;
        if (k < 0)
            memset(dst, 0, (size_t)inner_bytes);
        else if (inner_bytes == 4)
            memcpy(dst, c->d + (a * n_axis + k) * 4, 4);
        else
            memcpy(dst, c->d + (a * n_axis + k) * inner_bytes, (size_t)inner_bytes);
    }
}

void be_gather(void *out, const void *data, const void *idx, int idx64, int64_t outer, int64_t n_axis,
               int64_t n_idx, int64_t inner_bytes, int threads) {
    const int64_t rows = outer * n_idx;
    const int par = threads > 1 && rows * inner_bytes >= (1 << 18);
    gather_call c = {.o = out, .d = data, .idx = idx, .idx64 = idx64, .n_axis = n_axis, .n_idx = n_idx,
                     .inner_bytes = inner_bytes};
    be_parallel(par ? threads : 1, (long)rows, gather_rows, &c);
}

static void gather_elements_rows(void *ctx, int tid, long lo, long hi) {
    const gather_call *g = ctx;
    const int64_t *shape = g->shape, *data_strides = g->strides, n = g->n, axis_dim = g->axis_dim;
    const int ndim = g->ndim, axis = g->axis, elem = g->elem;
    (void)tid;
    for (int64_t r = lo; r < hi; r++) {
        int64_t rem = r, base = 0;
        for (int d = ndim - 2; d >= 0; d--) { /* offset of the row's outer index, the axis term excluded */
            const int64_t i = rem % shape[d];
            rem /= shape[d];
            if (d != axis) base += i * data_strides[d];
        }
        const int64_t sl = data_strides[ndim - 1];
        for (int64_t c = 0; c < n; c++) {
            const int64_t e = r * n + c;
            const int64_t k = wrap_index(read_index(g->idx, g->idx64, e), axis_dim);
            uint8_t *dst = g->o + e * elem;
            if (k < 0) {
                memset(dst, 0, (size_t)elem);
                continue;
            }
            int64_t off = base + k * data_strides[axis];
            if (axis != ndim - 1) off += c * sl;
            memcpy(dst, g->d + off * elem, (size_t)elem);
        }
    }
}

void be_gather_elements(void *out, const void *data, const void *idx, int idx64, int elem, int ndim,
                        const int64_t *shape, const int64_t *data_strides, int axis, int64_t axis_dim, int threads) {
    int64_t total = 1;
    for (int d = 0; d < ndim; d++) total *= shape[d];
    const int64_t n = shape[ndim - 1], rows = total / (n ? n : 1);
    if (total == 0) return;
    const int par = threads > 1 && total * elem >= (1 << 18);
    gather_call c = {.o = out, .d = data, .idx = idx, .idx64 = idx64, .elem = elem, .ndim = ndim, .axis = axis,
                     .n = n, .axis_dim = axis_dim, .shape = shape, .strides = data_strides};
    be_parallel(par ? threads : 1, (long)rows, gather_elements_rows, &c);
}

/* byte offset of index tuple t (k entries) or -1 */
static inline int64_t tuple_offset(const void *idx, int idx64, int64_t t, int k, const int64_t *dims,
                                   const int64_t *strides) {
    int64_t off = 0;
    for (int m = 0; m < k; m++) {
        const int64_t v = wrap_index(read_index(idx, idx64, t * k + m), dims[m]);
        if (v < 0) return -1;
        off += v * strides[m];
    }
    return off;
}

static void gather_nd_rows(void *ctx, int tid, long lo, long hi) {
    const gather_call *c = ctx;
    const int64_t n_per = c->n_per, batch_bytes = c->batch_bytes, slice_bytes = c->slice_bytes;
    (void)tid;
    for (int64_t r = lo; r < hi; r++) {
        const int64_t off = tuple_offset(c->idx, c->idx64, r, c->k, c->dims, c->strides);
        uint8_t *dst = c->o + r * slice_bytes;
        if (off < 0)
            memset(dst, 0, (size_t)slice_bytes);
        else
            memcpy(dst, c->d + (r / n_per) * batch_bytes + off, (size_t)slice_bytes);
    }
}

void be_gather_nd(void *out, const void *data, const void *idx, int idx64, int64_t n_batch, int64_t n_per, int k,
                  const int64_t *dims, const int64_t *strides, int64_t batch_bytes, int64_t slice_bytes,
                  int threads) {
    const int64_t rows = n_batch * n_per;
    const int par = threads > 1 && rows * slice_bytes >= (1 << 18);
    gather_call c = {.o = out, .d = data, .idx = idx, .idx64 = idx64, .k = k, .n_per = n_per,
                     .batch_bytes = batch_bytes, .slice_bytes = slice_bytes, .dims = dims, .strides = strides};
    be_parallel(par ? threads : 1, (long)rows, gather_nd_rows, &c);
}

void be_scatter_nd(void *out, const void *updates, const void *idx, int idx64, int64_t n, int k,
                   const int64_t *dims, const int64_t *strides, int64_t slice_bytes, int reduction) {
    uint8_t *o = (uint8_t *)out;
    const uint8_t *u = (const uint8_t *)updates;
    for (int64_t j = 0; j < n; j++) {
        const int64_t off = tuple_offset(idx, idx64, j, k, dims, strides);
        if (off < 0) continue;
        if (reduction == BE_SCATTER_NONE) {
            memcpy(o + off, u + j * slice_bytes, (size_t)slice_bytes);
            continue;
        }
        float *dst = (float *)(o + off);
        const float *src = (const float *)(u + j * slice_bytes);
        const int64_t m = slice_bytes / 4;
        for (int64_t e = 0; e < m; e++) {
            switch (reduction) {
            case BE_SCATTER_ADD: dst[e] += src[e]; break;
            case BE_SCATTER_MUL: dst[e] *= src[e]; break;
            case BE_SCATTER_MAX: dst[e] = dst[e] > src[e] || isnan(dst[e]) ? dst[e] : src[e]; break;
            default: dst[e] = dst[e] < src[e] || isnan(dst[e]) ? dst[e] : src[e]; break;
            }
        }
    }
}
