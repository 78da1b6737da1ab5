/* ArgMax / ArgMin over [outer, n, inner] (reduce.h): each lane walked in index order; NaN wins. */
#include "burnedge.h"
#include "reduce.h"

/* -- ArgMax / ArgMin ------------------------------------------------------------------------------------------- */
#define BE_ARGMAX(NAME, T)                                                                                     \
    void NAME(const T *x, int64_t *y, long outer, long n, long inner, int is_min, int last, int threads) {    \
        BE_PARALLEL_FOR(threads > 1 && outer * n * inner > 32768)                                            \
        for (long t = 0; t < outer * inner; t++) {                                                             \
            long o = t / inner, i = t % inner;                                                                 \
            const T *xl = x + o * n * inner + i;                                                               \
            T best = xl[0];                                                                                    \
            long at = 0;                                                                                       \
            for (long r = 1; r < n; r++) {                                                                     \
                T v = xl[r * inner];                                                                           \
                int better;                                                                                    \
                if (v != v) better = best == best || last; /* NaN beats numbers; the first NaN unless last */  \
                else if (best != best) better = 0;                                                             \
                else better = (is_min ? v < best : v > best) || (last && v == best);                           \
                if (better) { best = v; at = r; }                                                              \
            }                                                                                                  \
            y[o * inner + i] = at;                                                                             \
        }                                                                                                      \
    }

BE_ARGMAX(be_argmax_f32, float)
BE_ARGMAX(be_argmax_i32, int32_t)
BE_ARGMAX(be_argmax_i64, int64_t)
BE_ARGMAX(be_argmax_i8, int8_t)
BE_ARGMAX(be_argmax_u8, uint8_t)
