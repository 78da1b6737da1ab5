/* ONNX's integer products: ConvInteger, QLinearConv and MatMulInteger, on int8 / uint8 operands of either
 * signedness (a flag per operand), with zero points that may be run-time tensors.
 *
 * Sums of (x - x_zp)(w - w_zp) are exact in int64; ConvInteger and MatMulInteger store them as int32, as ONNX
 * defines their output. QLinearConv rescales each sum as burnedge/ops/conv.py does: the multiplier
 * x_scale * w_scale[m] / y_scale in float32, then y = clamp(nearbyint((double)(acc + bias) * multiplier) + y_zp)
 * (round half to even in the default rounding mode). */
#ifndef BURNEDGE_INTEGER_OPS_H
#define BURNEDGE_INTEGER_OPS_H

#include <stdint.h>

typedef struct {
    const void *x, *w;           /* x [n, c, d0, d1, d2], w [m, c / group, k0, k1, k2] */
    int x_signed, w_signed;      /* 1: int8, 0: uint8 (zero points share their tensor's type) */
    const void *x_zp, *w_zp;     /* one value, and 1 or m values (w_zp_n); NULL: zero */
    long w_zp_n;
    long n, c, m, group;
    long geo[18];                /* per spatial dim of 3: {in, out, kernel, stride, dilation, pad begin} */
    int32_t *acc;                /* ConvInteger: the int32 sums [n, m, o0, o1, o2]; NULL for QLinearConv */
    /* QLinearConv: */
    const int32_t *bias;         /* m values, or NULL */
    const float *x_scale, *w_scale, *y_scale; /* one, 1 or m (w_scale_n), one */
    long w_scale_n;
    const void *y_zp;            /* one value of y's type, or NULL: zero */
    void *y;                     /* [n, m, o0, o1, o2], 8 bits */
    int y_signed;
} be_conv_integer_args;

void be_conv_integer(const be_conv_integer_args *a, int threads);

/* y [batch, M, N] int32 = (a - a_zp) (b - b_zp) over K; a_zp has 1 or M values (per row), b_zp 1 or N (per
 * column), NULL for zero; the batch strides (elements) are 0 for an operand broadcast over the batch. */
void be_matmul_integer(const void *a, int a_signed, const void *a_zp, long a_zp_n, const void *b, int b_signed,
                       const void *b_zp, long b_zp_n, int32_t *y, long batch, long M, long K, long N,
                       long a_bstride, long b_bstride, int threads);

#endif
