/* Reduction-shaped kernels: Reduce* over one block of axes, ArgMax/ArgMin, TopK and CumSum.
 *
 * Every kernel sees its input as [outer, n, inner] (row-major): it reduces, ranks or scans the middle axis for
 * each of the outer*inner lanes. Several reduced axis blocks are reduced one block per call by the lowering.
 * `_portable` variants never use SIMD (for tests). */
#ifndef BURNEDGE_REDUCE_H
#define BURNEDGE_REDUCE_H

#include <stdint.h>

/* Reduce*: y = post(combine over the middle axis of pre(x)) */
enum be_reduce_pre { BE_PRE_NONE = 0, BE_PRE_ABS, BE_PRE_SQUARE };
enum be_reduce_comb { BE_RED_SUM = 0, BE_RED_MAX, BE_RED_MIN, BE_RED_PROD, BE_RED_LSE };
enum be_reduce_post { BE_POST_NONE = 0, BE_POST_SQRT, BE_POST_LOG, BE_POST_DIV };

void be_reduce_f32(const float *x, float *y, long outer, long n, long inner, int pre, int comb, int post,
                   float divisor, int threads);
void be_reduce_f32_portable(const float *x, float *y, long outer, long n, long inner, int pre, int comb, int post,
                            float divisor, int threads);
/* float64, in double (reference/lse.c); comb must not be BE_RED_LSE (be_reduce_lse_f64 in misc.h) */
void be_reduce_f64(const double *x, double *y, long outer, long n, long inner, int pre, int comb, int post,
                   double divisor, int threads);
/* integers wrap like the reference (sums and products in the input type); post must be BE_POST_NONE */
void be_reduce_i32(const int32_t *x, int32_t *y, long outer, long n, long inner, int pre, int comb, int threads);
void be_reduce_i64(const int64_t *x, int64_t *y, long outer, long n, long inner, int pre, int comb, int threads);
/* 8-bit and bool (0/1 bytes): comb must be BE_RED_MAX or BE_RED_MIN */
void be_reduce_i8(const int8_t *x, int8_t *y, long outer, long n, long inner, int pre, int comb, int threads);
void be_reduce_u8(const uint8_t *x, uint8_t *y, long outer, long n, long inner, int pre, int comb, int threads);
void be_reduce_bool(const uint8_t *x, uint8_t *y, long outer, long n, long inner, int pre, int comb, int threads);

/* ArgMax (is_min=0) / ArgMin: the first (or, with `last`, the last) index of the extreme; NaN wins */
void be_argmax_f32(const float *x, int64_t *y, long outer, long n, long inner, int is_min, int last, int threads);
void be_argmax_i32(const int32_t *x, int64_t *y, long outer, long n, long inner, int is_min, int last, int threads);
void be_argmax_i64(const int64_t *x, int64_t *y, long outer, long n, long inner, int is_min, int last, int threads);
void be_argmax_i8(const int8_t *x, int64_t *y, long outer, long n, long inner, int is_min, int last, int threads);
void be_argmax_u8(const uint8_t *x, int64_t *y, long outer, long n, long inner, int is_min, int last, int threads);

/* TopK: the k largest (or smallest) of each lane, sorted, equal values by ascending index; NaN is largest */
void be_topk_f32(const float *x, float *v, int64_t *idx, long outer, long n, long inner, long k, int largest,
                 int threads);
void be_topk_i32(const int32_t *x, int32_t *v, int64_t *idx, long outer, long n, long inner, long k, int largest,
                 int threads);
void be_topk_i64(const int64_t *x, int64_t *v, int64_t *idx, long outer, long n, long inner, long k, int largest,
                 int threads);
void be_topk_f64(const double *x, double *v, int64_t *idx, long outer, long n, long inner, long k, int largest,
                 int threads);
void be_topk_i8(const int8_t *x, int8_t *v, int64_t *idx, long outer, long n, long inner, long k, int largest,
                int threads);
void be_topk_u8(const uint8_t *x, uint8_t *v, int64_t *idx, long outer, long n, long inner, long k, int largest,
                int threads);
void be_topk_i16(const int16_t *x, int16_t *v, int64_t *idx, long outer, long n, long inner, long k, int largest,
                 int threads);
void be_topk_u16(const uint16_t *x, uint16_t *v, int64_t *idx, long outer, long n, long inner, long k, int largest,
                 int threads);
void be_topk_u32(const uint32_t *x, uint32_t *v, int64_t *idx, long outer, long n, long inner, long k, int largest,
                 int threads);
void be_topk_u64(const uint64_t *x, uint64_t *v, int64_t *idx, long outer, long n, long inner, long k, int largest,
                 int threads);

/* CumSum along the middle axis, sequentially (as the reference accumulates) */
void be_cumsum_f32(const float *x, float *y, long outer, long n, long inner, int exclusive, int reverse,
                   int threads);
void be_cumsum_f64(const double *x, double *y, long outer, long n, long inner, int exclusive, int reverse,
                   int threads);
void be_cumsum_i32(const int32_t *x, int32_t *y, long outer, long n, long inner, int exclusive, int reverse,
                   int threads);
void be_cumsum_i64(const int64_t *x, int64_t *y, long outer, long n, long inner, int exclusive, int reverse,
                   int threads);

#endif
