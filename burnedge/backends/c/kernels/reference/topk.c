/* TopK over [outer, n, inner] (reduce.h): the k largest (or smallest) of each lane, sorted, ties by index. */
#include "burnedge.h"
#include "reduce.h"

/* -- TopK ------------------------------------------------------------------------------------------------------ */
/* a ranks before b: a > b for largest (NaN above everything), a < b for smallest */
#define BE_GT(a, b) (((a) != (a) && (b) == (b)) || (a) > (b))

#define BE_TOPK(NAME, T)                                                                                       \
    void NAME(const T *x, T *v, int64_t *idx, long outer, long n, long inner, long k, int largest,            \
              int threads) {                                                                                   \
        BE_PARALLEL_FOR(threads > 1 && outer * n * inner > 4096)                                             \
        for (long t = 0; t < outer * inner; t++) {                                                             \
            long o = t / inner, i = t % inner;                                                                 \
            const T *xl = x + o * n * inner + i;                                                               \
            T *vl = v + o * k * inner + i;                                                                     \
            int64_t *il = idx + o * k * inner + i;                                                             \
            long cnt = 0;                                                                                      \
            for (long r = 0; r < n; r++) {                                                                     \
                T a = xl[r * inner];                                                                           \
                if (k == 0) break;                                                                             \
                if (cnt == k) {                                                                                \
                    T w = vl[(k - 1) * inner];                                                                 \
                    if (!(largest ? BE_GT(a, w) : BE_GT(w, a))) continue;                                      \
                }                                                                                              \
                long j = cnt < k ? cnt++ : k - 1;                                                              \
                while (j > 0) {                                                                                \
                    T w = vl[(j - 1) * inner];                                                                 \
                    if (!(largest ? BE_GT(a, w) : BE_GT(w, a))) break;                                         \
                    vl[j * inner] = w;                                                                         \
                    il[j * inner] = il[(j - 1) * inner];                                                       \
                    j--;                                                                                       \
                }                                                                                              \
                vl[j * inner] = a;                                                                             \
                il[j * inner] = r;                                                                             \
            }                                                                                                  \
        }                                                                                                      \
    }

BE_TOPK(be_topk_f32, float)
BE_TOPK(be_topk_i32, int32_t)
BE_TOPK(be_topk_i64, int64_t)
BE_TOPK(be_topk_f64, double)
BE_TOPK(be_topk_i8, int8_t)
BE_TOPK(be_topk_u8, uint8_t)
BE_TOPK(be_topk_i16, int16_t)
BE_TOPK(be_topk_u16, uint16_t)
BE_TOPK(be_topk_u32, uint32_t)
BE_TOPK(be_topk_u64, uint64_t)
