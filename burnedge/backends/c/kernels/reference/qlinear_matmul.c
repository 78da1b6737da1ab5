/* QLinearMatMul (qlinear_matmul.h): a scalar triple loop, rows shared out between threads. */
#include <math.h>

#include "qlinear_matmul.h"
#include "workers.h"

/* what a QLinearMatMul's rows task reads */
typedef struct {
    const void *a, *b;
    void *y;
    long M, K, N, a_bstride, b_bstride;
    float mult, yz;
    int32_t az, bz;
} qlinear_call;

#define BE_QLINEAR_MATMUL(NAME, T, LO, HI)                                                                       \
    static void NAME##_rows(void *ctx, int tid, long first, long last) {                                         \
        const qlinear_call *c = ctx;                                                                             \
        const T *a = c->a, *b = c->b;                                                                            \
        T *y = c->y;                                                                                             \
        const long M = c->M, K = c->K, N = c->N, a_bstride = c->a_bstride, b_bstride = c->b_bstride;             \
        const float mult = c->mult, yz = c->yz;                                                                  \
        const int32_t az = c->az, bz = c->bz;                                                                    \
        (void)tid;                                                                                               \
        for (long r = first; r < last; r++) {                                                                    \
            const long bi = r / M, m = r % M;                                                                    \
            const T *ar = a + bi * a_bstride + m * K;                                                            \
            const T *bm = b + bi * b_bstride;                                                                    \
            for (long n = 0; n < N; n++) {                                                                       \
                int32_t acc = 0;                                                                                 \
                for (long k = 0; k < K; k++) acc += ((int32_t)ar[k] - az) * ((int32_t)bm[k * N + n] - bz);       \
                float v = nearbyintf((float)acc * mult) + yz;                                                    \
                v = v < (float)(LO) ? (float)(LO) : (v > (float)(HI) ? (float)(HI) : v);                         \
                y[r * N + n] = (T)v;                                                                             \
            }                                                                                                    \
        }                                                                                                        \
    }                                                                                                            \
    void NAME(const T *a, const T *b, T *y, long batch, long M, long K, long N, long a_bstride, long b_bstride,  \
              const float *a_scale, const T *a_zp, const float *b_scale, const T *b_zp, const float *y_scale,    \
              const T *y_zp, int threads) {                                                                      \
        const float mult = a_scale[0] * b_scale[0] / y_scale[0];                                                 \
        const long rows = batch * M;                                                                             \
        const int par = threads > 1 && rows * N * K > 32768 && rows > 1;                                         \
        qlinear_call c = {a, b, y, M, K, N, a_bstride, b_bstride, mult, (float)y_zp[0], a_zp[0], b_zp[0]};       \
        be_parallel(par ? threads : 1, rows, NAME##_rows, &c);                                                   \
    }

BE_QLINEAR_MATMUL(be_qlinear_matmul_i8, int8_t, -128, 127)
BE_QLINEAR_MATMUL(be_qlinear_matmul_u8, uint8_t, 0, 255)
