/* int8 pooling and softmax: burnedge.QAvgPool, QGlobalAvgPool and QSoftmax (burnedge/ops/quantized.py).
 *
 * Averages keep the input's qparams: y = zp + round_div(sum(x - zp), count), round_div rounding half away from
 * zero. Pool geometry is that of pool.h: windows by kernel, stride, dilation and begin pad; `clo_* .. chi_*` is
 * the region whose positions count in the divisor (the input alone, or the input with its explicit pads).
 * QSoftmax: e = table[max - x] (int32), y = clamp(round_div(e * 256, sum(e)) - 128) along an axis seen as
 * [outer, n, inner].
 */
#ifndef BURNEDGE_QPOOL_H
#define BURNEDGE_QPOOL_H

#include <stdint.h>

void be_qavgpool2d_i8(const int8_t *x, int8_t *y, long nc, int ih, int iw, int oh, int ow, int kh, int kw, int sh,
                      int sw, int dh, int dw, int ph, int pw, int clo_h, int chi_h, int clo_w, int chi_w, int32_t zp,
                      int threads);

void be_qglobal_avgpool_i8(const int8_t *x, int8_t *y, long nc, long size, int32_t zp, int threads);

/* the same on a channels-last input (N, size, C): y[n*C + c] from x[(n*size + i)*C + c] */
void be_qglobal_avgpool_nhwc_i8(const int8_t *x, int8_t *y, long n, long size, long c, int32_t zp);

void be_qsoftmax_i8(const int8_t *x, int8_t *y, long outer, long n, long inner, const int32_t *table, int threads);

/* a / n rounded half away from zero (n > 0), exactly as C's int64 formula of the spec */
static inline int64_t be_round_div(int64_t a, int64_t n) {
    return a >= 0 ? (a + n / 2) / n : -((-a + n / 2) / n);
}

#endif
