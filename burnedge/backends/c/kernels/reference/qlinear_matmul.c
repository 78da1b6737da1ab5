/* QLinearMatMul (qlinear_matmul.h): a scalar triple loop, rows shared out between threads. */
#include <math.h>

#include "qlinear_matmul.h"

#define BE_QLINEAR_MATMUL(NAME, T, LO, HI)                                                                       \
    void NAME(const T *a, const T *b, T *y, long batch, long M, long K, long N, long a_bstride, long b_bstride,  \
              const float *a_scale, const T *a_zp, const float *b_scale, const T *b_zp, const float *y_scale,    \
              const T *y_zp, int threads) {                                                                      \
        const float mult = a_scale[0] * b_scale[0] / y_scale[0];                                                 \
        const int32_t az = a_zp[0], bz = b_zp[0];                                                                \
        const float yz = (float)y_zp[0];                                                                         \
        const long rows = batch * M;                                                                             \
        const int par = threads > 1 && rows * N * K > 32768 && rows > 1;                                         \
        _Pragma("omp parallel for num_threads(threads) schedule(static) if (par)")                               \
        for (long r = 0; r < rows; r++) {                                                                        \
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
    }

BE_QLINEAR_MATMUL(be_qlinear_matmul_i8, int8_t, -128, 127)
BE_QLINEAR_MATMUL(be_qlinear_matmul_u8, uint8_t, 0, 255)
