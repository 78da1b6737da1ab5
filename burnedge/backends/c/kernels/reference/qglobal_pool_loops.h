/* Internal to the kernel sets: the loops of qglobal_pool.c (reference/qglobal_pool.c has the algorithm). A set's
 * qglobal_pool.c defines plane_sum (the exact sum of one plane), then includes this. */
#ifndef BURNEDGE_QGLOBAL_POOL_LOOPS_H
#define BURNEDGE_QGLOBAL_POOL_LOOPS_H

#include "qpool.h"
#include "workers.h"

static inline int8_t clamp8(int64_t v) { return (int8_t)(v < -128 ? -128 : (v > 127 ? 127 : v)); }

typedef struct {
    const int8_t *x;
    int8_t *y;
    long size;
    int32_t zp;
} qglobal_pool_call;

static void qglobal_planes(void *ctx, int tid, long lo, long hi) {
    const qglobal_pool_call *c = ctx;
    const long size = c->size;
    const int32_t zp = c->zp;
    (void)tid;
    for (long p = lo; p < hi; p++) {
        const int64_t s = plane_sum(c->x + p * size, size) - (int64_t)zp * size;
        c->y[p] = size > 0 ? clamp8(zp + be_round_div(s, size)) : (int8_t)zp;
    }
}

void be_qglobal_avgpool_i8(const int8_t *x, int8_t *y, long nc, long size, int32_t zp, int threads) {
    const int par = threads > 1 && nc > 1 && nc * size > 65536;
    qglobal_pool_call c = {x, y, size, zp};
    be_parallel(par ? threads : 1, nc, qglobal_planes, &c);
}

/* channels-last: int32 sums of 256 channels at a time along the pixels (exact below 2^23 pixels) */
void be_qglobal_avgpool_nhwc_i8(const int8_t *x, int8_t *y, long n, long size, long c, int32_t zp) {
    int32_t acc[256];
    for (long i = 0; i < n; i++)
        for (long c0 = 0; c0 < c; c0 += 256) {
            const long w = c - c0 < 256 ? c - c0 : 256;
            const int8_t *xi = x + i * size * c + c0;
            for (long k = 0; k < w; k++) acc[k] = 0;
            for (long p = 0; p < size; p++)
                for (long k = 0; k < w; k++) acc[k] += xi[p * c + k];
            for (long k = 0; k < w; k++) {
                const int64_t s = (int64_t)acc[k] - (int64_t)zp * size;
                y[i * c + c0 + k] = size > 0 ? clamp8(zp + be_round_div(s, size)) : (int8_t)zp;
            }
        }
}

#endif
