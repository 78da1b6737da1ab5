/* Integer Reduce* over [outer, n, inner] (reduce.h): sums and products accumulate in the unsigned type, so they
 * wrap like numpy's without C overflow; lanes are independent, so threads split them. */
#include "burnedge.h"
#include "reduce.h"

/* -- integer reductions ---------------------------------------------------------------------------------------- */
#define BE_REDUCE_INT(NAME, T, UT, TMIN, TMAX)                                                                 \
    void NAME(const T *x, T *y, long outer, long n, long inner, int pre, int comb, int threads) {             \
        BE_PARALLEL_FOR(threads > 1 && outer * n * inner > 32768)                                            \
        for (long t = 0; t < outer * inner; t++) {                                                             \
            long o = t / inner, i = t % inner;                                                                 \
            const T *xl = x + o * n * inner + i;                                                               \
            UT acc = comb == BE_RED_PROD ? 1u : 0u;                                                            \
            T m = comb == BE_RED_MAX ? TMIN : TMAX;                                                            \
            for (long r = 0; r < n; r++) {                                                                     \
                T v = xl[r * inner];                                                                           \
                UT u = (UT)v;                                                                                  \
                if (pre == BE_PRE_ABS) u = v < 0 ? (UT)0 - u : u;                                              \
                if (pre == BE_PRE_SQUARE) u = u * u;                                                           \
                if (comb == BE_RED_SUM) acc += u;                                                              \
                else if (comb == BE_RED_PROD) acc *= u;                                                        \
                else if (comb == BE_RED_MAX) m = v > m ? v : m;                                                \
                else m = v < m ? v : m;                                                                        \
            }                                                                                                  \
            y[o * inner + i] = (comb == BE_RED_MAX || comb == BE_RED_MIN) ? m : (T)acc;                        \
        }                                                                                                      \
    }

BE_REDUCE_INT(be_reduce_i32, int32_t, uint32_t, INT32_MIN, INT32_MAX)
BE_REDUCE_INT(be_reduce_i64, int64_t, uint64_t, INT64_MIN, INT64_MAX)
/* 8-bit and bool: ReduceMax / ReduceMin only (the lowering asks for nothing else); int8 is how quantized tensors
 * reach a max (int8_passthrough: the max of int8 codes is the code of the max) */
BE_REDUCE_INT(be_reduce_i8, int8_t, uint8_t, INT8_MIN, INT8_MAX)
BE_REDUCE_INT(be_reduce_u8, uint8_t, uint8_t, 0, UINT8_MAX)
BE_REDUCE_INT(be_reduce_bool, uint8_t, uint8_t, 0, 1)
