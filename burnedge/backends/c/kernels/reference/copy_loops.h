/* Internal to the kernel sets: the loops of copy.c (reference/copy.c has the algorithm). A set's copy.c defines
 * copy_tile_fast (a transpose of an na x nb block it does faster: returns 1, else 0), then includes this. */
#ifndef BURNEDGE_COPY_LOOPS_H
#define BURNEDGE_COPY_LOOPS_H

#include "workers.h"
#include <string.h>

#include "burnedge.h"
#include "copy.h"

#define BE_COPY_TILE 32
#define BE_COPY_PAR_BYTES (1 << 18) /* below this a copy runs on one thread */

/* one strided row of n elements */
static void copy_row(uint8_t *restrict o, const uint8_t *restrict i, int elem, int64_t n, int64_t os, int64_t is) {
    if (os == 1 && is == 1) {
        memcpy(o, i, (size_t)(n * elem));
        return;
    }
#define BE_ROW(T)                                                                                                \
    do {                                                                                                         \
        T *restrict po = (T *)o;                                                                                 \
        const T *restrict pi = (const T *)i;                                                                     \
        if (is == 0) {                                                                                           \
            const T v = pi[0];                                                                                   \
            for (int64_t k = 0; k < n; k++) po[k * os] = v;                                                      \
        } else if (os == 1) {                                                                                    \
            for (int64_t k = 0; k < n; k++) po[k] = pi[k * is];                                                  \
        } else {                                                                                                 \
            for (int64_t k = 0; k < n; k++) po[k * os] = pi[k * is];                                             \
        }                                                                                                        \
    } while (0)
    switch (elem) {
    case 1: BE_ROW(uint8_t); break;
    case 2: BE_ROW(uint16_t); break;
    case 4: BE_ROW(uint32_t); break;
    default: BE_ROW(uint64_t); break;
    }
#undef BE_ROW
}

/* out[a * osa + b] = in[a + b * isb] for a < na, b < nb: one tiled 2-D transpose */
static void copy_tile(uint8_t *restrict o, const uint8_t *restrict i, int elem, int64_t na, int64_t nb, int64_t osa,
                      int64_t isb) {
#define BE_TILE(T)                                                                                               \
    do {                                                                                                         \
        T *restrict po = (T *)o;                                                                                 \
        const T *restrict pi = (const T *)i;                                                                     \
        for (int64_t b0 = 0; b0 < nb; b0 += BE_COPY_TILE) {                                                      \
            const int64_t b1 = b0 + BE_COPY_TILE < nb ? b0 + BE_COPY_TILE : nb;                                  \
            for (int64_t a = 0; a < na; a++)                                                                     \
                for (int64_t b = b0; b < b1; b++) po[a * osa + b] = pi[a + b * isb];                             \
        }                                                                                                        \
    } while (0)
    if (copy_tile_fast(o, i, elem, na, nb, osa, isb)) return;
    switch (elem) {
    case 1: BE_TILE(uint8_t); break;
    case 2: BE_TILE(uint16_t); break;
    case 4: BE_TILE(uint32_t); break;
    default: BE_TILE(uint64_t); break;
    }
#undef BE_TILE
}

/* offsets of the multi-index of `u` over dims [0, nd) of `shape`; fills idx */
static void unravel(int64_t u, int nd, const int64_t *shape, int64_t *idx) {
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = u % shape[d];
        u /= shape[d];
    }
}

static void copy_range(uint8_t *restrict out, const uint8_t *restrict in, int elem, int ndim, const int64_t *shape,
                       const int64_t *os, const int64_t *is, int tiled, int64_t lo, int64_t hi) {
    int64_t idx[8];
    const int nouter = tiled ? ndim - 2 : ndim - 1;
    if (!tiled) {
        unravel(lo, nouter, shape, idx);
        int64_t oo = 0, io = 0;
        for (int d = 0; d < nouter; d++) {
            oo += idx[d] * os[d];
            io += idx[d] * is[d];
        }
        const int last = ndim - 1;
        for (int64_t u = lo; u < hi; u++) {
            copy_row(out + oo * elem, in + io * elem, elem, shape[last], os[last], is[last]);
            for (int d = nouter - 1; d >= 0; d--) { /* odometer */
                oo += os[d];
                io += is[d];
                if (++idx[d] < shape[d]) break;
                oo -= os[d] * shape[d];
                io -= is[d] * shape[d];
                idx[d] = 0;
            }
        }
        return;
    }
    const int da = ndim - 2, db = ndim - 1;
    const int64_t bands = (shape[da] + BE_COPY_TILE - 1) / BE_COPY_TILE;
    for (int64_t u = lo; u < hi; u++) {
        const int64_t row = u / bands, band = u % bands;
        unravel(row, nouter, shape, idx);
        int64_t oo = 0, io = 0;
        for (int d = 0; d < nouter; d++) {
            oo += idx[d] * os[d];
            io += idx[d] * is[d];
        }
        const int64_t a0 = band * BE_COPY_TILE;
        const int64_t na = shape[da] - a0 < BE_COPY_TILE ? shape[da] - a0 : BE_COPY_TILE;
        oo += a0 * os[da];
        io += a0; /* is[da] == 1 */
        copy_tile(out + oo * elem, in + io * elem, elem, na, shape[db], os[da], is[db]);
    }
}

typedef struct {
    uint8_t *o;
    const uint8_t *i;
    const int64_t *shape, *out_strides, *in_strides, *const *tab;
    const void *fill;
    int64_t inner_lo, inner_hi;
    int elem, ndim, tiled;
} copy_call;

static void copy_units(void *ctx, int tid, long lo, long hi) {
    const copy_call *c = ctx;
    (void)tid;
    copy_range(c->o, c->i, c->elem, c->ndim, c->shape, c->out_strides, c->in_strides, c->tiled, lo, hi);
}

void be_copy_nd(void *out, const void *in, int elem, int ndim, const int64_t *shape, const int64_t *out_strides,
                const int64_t *in_strides, int threads) {
    int64_t total = 1;
    for (int d = 0; d < ndim; d++) total *= shape[d];
    if (total == 0) return;
    const int tiled = ndim >= 2 && in_strides[ndim - 2] == 1 && out_strides[ndim - 1] == 1 &&
                      in_strides[ndim - 1] != 1 && out_strides[ndim - 2] != 1;
    int64_t units = 1;
    for (int d = 0; d < (tiled ? ndim - 2 : ndim - 1); d++) units *= shape[d];
    if (tiled) units *= (shape[ndim - 2] + BE_COPY_TILE - 1) / BE_COPY_TILE;
    copy_call c = {.o = (uint8_t *)out, .i = (const uint8_t *)in, .shape = shape, .out_strides = out_strides, .in_strides = in_strides,
                   .elem = elem, .ndim = ndim, .tiled = tiled};
    be_parallel(total * elem >= BE_COPY_PAR_BYTES ? threads : 1, (long)units, copy_units, &c);
}

void be_fill(void *out, const void *value, int elem, int64_t n) {
    switch (elem) {
    case 1: memset(out, *(const uint8_t *)value, (size_t)n); break;
    case 2: {
        uint16_t v;
        memcpy(&v, value, 2);
        uint16_t *p = (uint16_t *)out;
        for (int64_t k = 0; k < n; k++) p[k] = v;
        break;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, value, 4);
        if (v == 0) {
            memset(out, 0, (size_t)n * 4);
            break;
        }
        uint32_t *p = (uint32_t *)out;
        for (int64_t k = 0; k < n; k++) p[k] = v;
        break;
    }
    default: {
        uint64_t v;
        memcpy(&v, value, 8);
        uint64_t *p = (uint64_t *)out;
        for (int64_t k = 0; k < n; k++) p[k] = v;
        break;
    }
    }
}

/* one dense output row of n elements through the last dim's table */
static void table_row(uint8_t *restrict o, const uint8_t *restrict i, int elem, int64_t n, const int64_t *tab,
                      int64_t lo, int64_t hi, const void *fill) {
#define BE_TROW(T)                                                                                               \
    do {                                                                                                         \
        T *restrict po = (T *)o;                                                                                 \
        const T *restrict pi = (const T *)i;                                                                     \
        T f = 0;                                                                                                 \
        if (fill) memcpy(&f, fill, sizeof(T));                                                                   \
        for (int64_t k = 0; k < lo; k++) po[k] = tab[k] < 0 ? f : pi[tab[k]];                                    \
        if (hi > lo) memcpy(po + lo, pi + tab[lo], (size_t)(hi - lo) * sizeof(T));                               \
        for (int64_t k = hi; k < n; k++) po[k] = tab[k] < 0 ? f : pi[tab[k]];                                    \
    } while (0)
    switch (elem) {
    case 1: BE_TROW(uint8_t); break;
    case 2: BE_TROW(uint16_t); break;
    case 4: BE_TROW(uint32_t); break;
    default: BE_TROW(uint64_t); break;
    }
#undef BE_TROW
}

/* output rows [lo, hi) of be_copy_table_nd */
static void table_rows(void *ctx, int tid, long lo, long hi) {
    const copy_call *c = ctx;
    const int ndim = c->ndim, elem = c->elem;
    const int64_t *shape = c->shape, *const *tab = c->tab, n = shape[ndim - 1];
    const int64_t inner_lo = c->inner_lo, inner_hi = c->inner_hi;
    const void *fill = c->fill;
    uint8_t *o = c->o;
    const uint8_t *i = c->i;
    int64_t idx[8];
    (void)tid;
    unravel(lo, ndim - 1, shape, idx);
    for (int64_t r = lo; r < hi; r++) {
        int64_t src = 0;
        int filled = 0;
        for (int d = 0; d < ndim - 1; d++) {
            const int64_t v = tab[d][idx[d]];
            if (v < 0) filled = 1;
            src += v;
        }
        uint8_t *orow = o + r * n * elem;
        if (filled)
            be_fill(orow, fill, elem, n);
        else
            table_row(orow, i + src * elem, elem, n, tab[ndim - 1], inner_lo, inner_hi, fill);
        for (int d = ndim - 2; d >= 0; d--) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
}

void be_copy_table_nd(void *out, const void *in, int elem, int ndim, const int64_t *shape, const int64_t *tables,
                      int64_t inner_lo, int64_t inner_hi, const void *fill, int threads) {
    int64_t total = 1, rows = 1;
    const int64_t *tab[8];
    const int64_t *t = tables;
    for (int d = 0; d < ndim; d++) {
        total *= shape[d];
        if (d < ndim - 1) rows *= shape[d];
        tab[d] = t;
        t += shape[d];
    }
    if (total == 0) return;
    copy_call c = {.o = (uint8_t *)out, .i = (const uint8_t *)in, .shape = shape, .tab = tab, .fill = fill, .inner_lo = inner_lo,
                   .inner_hi = inner_hi, .elem = elem, .ndim = ndim};
    be_parallel(total * elem >= BE_COPY_PAR_BYTES ? threads : 1, (long)rows, table_rows, &c);
}

#endif
