/* BatchNorm as a per-channel affine map y = x * k[c] + b[c] (norm.h). */
#include "burnedge.h"
#include "norm.h"

void be_channel_affine_f32(const float *x, float *y, const float *k, const float *b, long n, long c, long size,
                           int threads) {
    if (size == 1) { /* [n, c]: the channel is the contiguous axis */
        for (long i = 0; i < n; i++)
            for (long j = 0; j < c; j++) y[i * c + j] = x[i * c + j] * k[j] + b[j];
        return;
    }
    BE_PARALLEL_FOR(threads > 1 && n * c > 1 && n * c * size > 32768)
    for (long t = 0; t < n * c; t++) {
        float kk = k[t % c], bb = b[t % c];
        const float *xp = x + t * size;
        float *yp = y + t * size;
        for (long i = 0; i < size; i++) yp[i] = xp[i] * kk + bb;
    }
}
