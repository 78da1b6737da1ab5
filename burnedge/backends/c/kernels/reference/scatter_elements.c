/* ScatterElements (misc.h): a copy of data, then every update in index order (so duplicates apply in turn, the
 * last write winning without a reduction), at the element whose `axis` coordinate the index names. An index out
 * of range after counting from the end skips its update, as every backend does (burnedge/ops/_intmath.py). */
#include "burnedge.h"
#include "gather.h"
#include "misc.h"

#define BE_IMAX(a, b) ((a) > (b) ? (a) : (b))
#define BE_IMIN(a, b) ((a) < (b) ? (a) : (b))

#define BE_SCATTER_ELEMENTS(NAME, T, AT, MAX, MIN)                                                             \
    int NAME(const T *data, const void *idx, int idx64, const T *upd, T *y, const long *ddims, const long *idims, \
             int rank, int axis, int reduction) {                                                             \
        long dsize = 1, isize = 1;                                                                             \
        for (int d = 0; d < rank; d++) dsize *= ddims[d], isize *= idims[d];                                   \
        if (y != data) memmove(y, data, (size_t)dsize * sizeof(T));                                            \
        for (long e = 0; e < isize; e++) {                                                                     \
            int64_t v = idx64 ? ((const int64_t *)idx)[e] : (int64_t)((const int32_t *)idx)[e];               \
            if (v < 0) v += ddims[axis];                                                                       \
            if (v < 0 || v >= ddims[axis]) continue;                                                           \
            long rest = e, off = 0, stride = 1;                                                                \
            for (int d = rank - 1; d >= 0; d--) {                                                              \
                long c = rest % idims[d];                                                                      \
                rest /= idims[d];                                                                              \
                off += (d == axis ? (long)v : c) * stride;                                                     \
                stride *= ddims[d];                                                                            \
            }                                                                                                  \
            T u = upd[e], *t = y + off;                                                                        \
            switch (reduction) {                                                                               \
            case BE_SCATTER_ADD: *t = (T)((AT)*t + (AT)u); break;                                              \
            case BE_SCATTER_MUL: *t = (T)((AT)*t * (AT)u); break;                                              \
            case BE_SCATTER_MAX: *t = MAX(*t, u); break;                                                       \
            case BE_SCATTER_MIN: *t = MIN(*t, u); break;                                                       \
            default: *t = u;                                                                                   \
            }                                                                                                  \
        }                                                                                                      \
        return 0;                                                                                              \
    }

BE_SCATTER_ELEMENTS(be_scatter_elements_f32, float, float, be_maxf, be_minf)
BE_SCATTER_ELEMENTS(be_scatter_elements_i32, int32_t, uint32_t, BE_IMAX, BE_IMIN)
BE_SCATTER_ELEMENTS(be_scatter_elements_i64, int64_t, uint64_t, BE_IMAX, BE_IMIN)
