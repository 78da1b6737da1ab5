/* Separable resampling for Resize / Upsample in float32: one axis per call, the lowering chains the calls.
 *
 * Steps (per call):
 *   1. the lowering computed, for every output index j along the axis, k source indices and weights (2 taps for
 *      linear, 4 for cubic, more for an antialiased downscale) with the reference's own coordinate code;
 *   2. each output row out[o, j, :] (inner elements long) is the weighted sum of k input rows, accumulated tap by
 *      tap in the reference's order (w0 * row0, then + w1 * row1 ...), so results match it to the last bit;
 *   3. a row whose first index is negative was extrapolated (tf_crop_and_resize): it is filled with `extrap`;
 *   4. rows (outer rows along the last axis) are split over threads when the output is large; each is written
 *      by one thread.
 */
#include "workers.h"
#include "burnedge.h"
#include "resize.h"

typedef struct {
    float *out;
    const float *in, *w;
    const int32_t *idx;
    int64_t n_in, n_out, inner;
    float extrap;
    int k;
} resize_call;

/* along the last axis (inner == 1): outer rows [lo, hi), one element per tap */
static void resize_last(void *ctx, int tid, long lo, long hi) {
    const resize_call *c = ctx;
    const int64_t n_in = c->n_in, n_out = c->n_out;
    const int32_t *idx = c->idx;
    const float *w = c->w, extrap = c->extrap;
    const int k = c->k;
    (void)tid;
    for (int64_t a = lo; a < hi; a++) {
        const float *src = c->in + a * n_in;
        float *dst = c->out + a * n_out;
        if (k == 2) {
            for (int64_t j = 0; j < n_out; j++) {
                const int32_t i0 = idx[2 * j], i1 = idx[2 * j + 1];
                dst[j] = i0 < 0 ? extrap : src[i0] * w[2 * j] + src[i1] * w[2 * j + 1];
            }
            continue;
        }
        for (int64_t j = 0; j < n_out; j++) {
            const int32_t *ix = idx + j * k;
            const float *wj = w + j * k;
            if (ix[0] < 0) {
                dst[j] = extrap;
                continue;
            }
            float acc = src[ix[0]] * wj[0];
            for (int t = 1; t < k; t++) acc = acc + src[ix[t]] * wj[t];
            dst[j] = acc;
        }
    }
}

/* output rows [lo, hi) of `inner` elements, each the weighted sum of k input rows */
static void resize_rows(void *ctx, int tid, long lo, long hi) {
    const resize_call *c = ctx;
    const int64_t n_in = c->n_in, n_out = c->n_out, inner = c->inner;
    const float *restrict x = c->in;
    const int k = c->k;
    (void)tid;
    for (int64_t r = lo; r < hi; r++) {
        const int64_t a = r / n_out, j = r % n_out;
        const int32_t *ix = c->idx + j * k;
        const float *wj = c->w + j * k;
        float *restrict dst = c->out + r * inner;
        if (ix[0] < 0) {
            for (int64_t e = 0; e < inner; e++) dst[e] = c->extrap;
            continue;
        }
        const float *s0 = x + (a * n_in + ix[0]) * inner;
        const float w0 = wj[0];
        for (int64_t e = 0; e < inner; e++) dst[e] = s0[e] * w0;
        for (int t = 1; t < k; t++) {
            const float *s = x + (a * n_in + ix[t]) * inner;
            const float wt = wj[t];
            for (int64_t e = 0; e < inner; e++) dst[e] = dst[e] + s[e] * wt;
        }
    }
}

void be_resize_axis_f32(float *out, const float *in, int64_t outer, int64_t n_in, int64_t n_out, int64_t inner,
                        int k, const int32_t *idx, const float *w, float extrap, int threads) {
    const int64_t rows = outer * n_out;
    const int nt = rows * inner >= (1 << 16) ? threads : 1;
    resize_call c = {out, in, w, idx, n_in, n_out, inner, extrap, k};
    if (inner == 1)
        be_parallel(nt, (long)outer, resize_last, &c);
    else
        be_parallel(nt, (long)rows, resize_rows, &c);
}
