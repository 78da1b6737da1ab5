/* ConvInteger, QLinearConv and MatMulInteger (integer_ops.h): direct loops, exact int64 sums. */
#include "burnedge.h"
#include "workers.h"
#include "integer_ops.h"

static inline int32_t be__i8(const void *p, int is_signed, long i) {
    return is_signed ? (int32_t)((const int8_t *)p)[i] : (int32_t)((const uint8_t *)p)[i];
}

/* one value of a zero point of `n` values (0 when absent): the only one, or the `i`-th */
static inline int32_t be__zp(const void *p, int is_signed, long n, long i) {
    return p ? be__i8(p, is_signed, n == 1 ? 0 : i) : 0;
}

/* sum over (c / group, k0, k1, k2) of (x - xz)(w - wz) for output channel oc at output position o[3] of image b;
 * taps in the padding read x = xz (the padded value of the shifted input is 0) */
static int64_t be__conv_acc(const be_conv_integer_args *a, long b, long oc, const long *o, int32_t xz, int32_t wz) {
    const long *g0 = a->geo, *g1 = a->geo + 6, *g2 = a->geo + 12;
    const long cg = a->c / a->group, c0 = oc / (a->m / a->group) * cg;
    const long plane = g0[0] * g1[0] * g2[0], taps = g0[2] * g1[2] * g2[2];
    int64_t acc = 0;
    for (long ci = 0; ci < cg; ci++) {
        const long xoff = (b * a->c + c0 + ci) * plane;
        const long woff = (oc * cg + ci) * taps;
        for (long k0 = 0; k0 < g0[2]; k0++) {
            const long i0 = o[0] * g0[3] + k0 * g0[4] - g0[5];
            if (i0 < 0 || i0 >= g0[0]) continue;
            for (long k1 = 0; k1 < g1[2]; k1++) {
                const long i1 = o[1] * g1[3] + k1 * g1[4] - g1[5];
                if (i1 < 0 || i1 >= g1[0]) continue;
                for (long k2 = 0; k2 < g2[2]; k2++) {
                    const long i2 = o[2] * g2[3] + k2 * g2[4] - g2[5];
                    if (i2 < 0 || i2 >= g2[0]) continue;
                    const int32_t xv = be__i8(a->x, a->x_signed, xoff + (i0 * g1[0] + i1) * g2[0] + i2) - xz;
                    const int32_t wv = be__i8(a->w, a->w_signed, woff + (k0 * g1[2] + k1) * g2[2] + k2) - wz;
                    acc += (int64_t)xv * wv;
                }
            }
        }
    }
    return acc;
}

typedef struct {
    const be_conv_integer_args *a;
    long out;
    int32_t xz, lo, hi;
} conv_integer_call;

/* (image, output channel) pairs lo_ .. hi_-1 */
static void conv_integer_planes(void *ctx, int tid, long lo_, long hi_) {
    const conv_integer_call *c = ctx;
    const be_conv_integer_args *a = c->a;
    const long *g1 = a->geo + 6, *g2 = a->geo + 12;
    const long out = c->out;
    const int32_t xz = c->xz, lo = c->lo, hi = c->hi;
    (void)tid;
    for (long bm = lo_; bm < hi_; bm++) {
        const long b = bm / a->m, oc = bm % a->m;
        const int32_t wz = be__zp(a->w_zp, a->w_signed, a->w_zp_n, oc);
        float mult = 0.0f;
        double yz = 0.0;
        if (!a->acc) {
            mult = a->x_scale[0] * a->w_scale[a->w_scale_n == 1 ? 0 : oc] / a->y_scale[0];
            yz = (double)be__zp(a->y_zp, a->y_signed, 1, 0);
        }
        for (long p = 0; p < out; p++) {
            const long o[3] = {p / (g1[1] * g2[1]), p / g2[1] % g1[1], p % g2[1]};
            int64_t acc = be__conv_acc(a, b, oc, o, xz, wz);
            if (a->acc) {
                a->acc[bm * out + p] = (int32_t)acc;
                continue;
            }
            if (a->bias) acc += a->bias[oc];
            double v = nearbyint((double)acc * (double)mult) + yz;
            v = v < lo ? lo : (v > hi ? hi : v);
            if (a->y_signed)
                ((int8_t *)a->y)[bm * out + p] = (int8_t)v;
            else
                ((uint8_t *)a->y)[bm * out + p] = (uint8_t)v;
        }
    }
}

void be_conv_integer(const be_conv_integer_args *a, int threads) {
    const long *g0 = a->geo, *g1 = a->geo + 6, *g2 = a->geo + 12;
    const long out = g0[1] * g1[1] * g2[1];
    const int32_t xz = be__zp(a->x_zp, a->x_signed, 1, 0);
    const int32_t lo = a->y_signed ? -128 : 0, hi = a->y_signed ? 127 : 255;
    conv_integer_call c = {a, out, xz, lo, hi};
    be_parallel(threads > 1 && a->n * a->m > 1 ? threads : 1, a->n * a->m, conv_integer_planes, &c);
}

typedef struct {
    const void *a, *a_zp, *b, *b_zp;
    int a_signed, b_signed;
    long a_zp_n, b_zp_n, M, K, N, a_bstride, b_bstride;
    int32_t *y;
} matmul_integer_call;

/* rows lo_ .. hi_-1 of the batch of products */
static void matmul_integer_rows(void *ctx, int tid, long lo_, long hi_) {
    const matmul_integer_call *c = ctx;
    const void *a = c->a, *a_zp = c->a_zp, *b = c->b, *b_zp = c->b_zp;
    const int a_signed = c->a_signed, b_signed = c->b_signed;
    const long a_zp_n = c->a_zp_n, b_zp_n = c->b_zp_n, M = c->M, K = c->K, N = c->N;
    const long a_bstride = c->a_bstride, b_bstride = c->b_bstride;
    int32_t *y = c->y;
    (void)tid;
    for (long bm = lo_; bm < hi_; bm++) {
        const long t = bm / M, i = bm % M;
        const long aoff = t * a_bstride + i * K, boff = t * b_bstride;
        const int32_t az = be__zp(a_zp, a_signed, a_zp_n, i);
        for (long j = 0; j < N; j++) {
            const int32_t bz = be__zp(b_zp, b_signed, b_zp_n, j);
            int64_t acc = 0;
            for (long k = 0; k < K; k++)
                acc += (int64_t)(be__i8(a, a_signed, aoff + k) - az) * (be__i8(b, b_signed, boff + k * N + j) - bz);
            y[bm * N + j] = (int32_t)acc;
        }
    }
}

void be_matmul_integer(const void *a, int a_signed, const void *a_zp, long a_zp_n, const void *b, int b_signed,
                       const void *b_zp, long b_zp_n, int32_t *y, long batch, long M, long K, long N,
                       long a_bstride, long b_bstride, int threads) {
    const int par = threads > 1 && batch * M > 1 && batch * M * N * K > 4096;
    matmul_integer_call c = {a, a_zp, b, b_zp, a_signed, b_signed, a_zp_n, b_zp_n, M, K, N, a_bstride, b_bstride, y};
    be_parallel(par ? threads : 1, batch * M, matmul_integer_rows, &c);
}

