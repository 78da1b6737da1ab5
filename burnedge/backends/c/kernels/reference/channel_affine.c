/* BatchNorm as a per-channel affine map y = x * k[c] + b[c] (norm.h). */
#include "burnedge.h"
#include "norm.h"
#include "workers.h"

typedef struct {
    const float *x, *k, *b;
    float *y;
    long c, size;
} affine_call;

static void affine_planes(void *ctx, int tid, long lo, long hi) {
    const affine_call *a = ctx;
    (void)tid;
    for (long t = lo; t < hi; t++) {
        float kk = a->k[t % a->c], bb = a->b[t % a->c];
        const float *xp = a->x + t * a->size;
        float *yp = a->y + t * a->size;
        for (long i = 0; i < a->size; i++) yp[i] = xp[i] * kk + bb;
    }
}

void be_channel_affine_f32(const float *x, float *y, const float *k, const float *b, long n, long c, long size,
                           int threads) {
    if (size == 1) { /* [n, c]: the channel is the contiguous axis */
        for (long i = 0; i < n; i++)
            for (long j = 0; j < c; j++) y[i * c + j] = x[i * c + j] * k[j] + b[j];
        return;
    }
    affine_call a = {x, k, b, y, c, size};
    be_parallel(n * c * size > 32768 ? threads : 1, n * c, affine_planes, &a);
}
