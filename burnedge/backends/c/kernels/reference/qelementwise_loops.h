/* Internal to the kernel sets: the loops of qelementwise.c (reference/qelementwise.c has the algorithm). A set's
 * qelementwise.c defines, after qelementwise_common.h, its vector rows and the statement hooks QBIN_ROW_VEC,
 * QREQ_VEC and QLUT_VEC (over the locals where they stand; empty: the scalar rule alone), then includes this. */
#ifndef BURNEDGE_QELEMENTWISE_LOOPS_H
#define BURNEDGE_QELEMENTWISE_LOOPS_H

#include "qelementwise_common.h"
#include "workers.h"

#ifndef QLUT_VEC
#define QLUT_VEC() /* a set without a vector table lookup: the scalar loop alone */
#endif

static void row(const int8_t *a, long sa, const int8_t *b, long sb, int8_t *y, long n, const be_qbin *p) {
    long i = 0;
    QBIN_ROW_VEC()
    if (p->op == BE_QADD)
        for (; i < n; i++) y[i] = qadd1(a[i * sa], b[i * sb], p);
    else
        for (; i < n; i++) y[i] = qmul1(a[i * sa], b[i * sb], p);
}

typedef struct {
    const int8_t *a, *b;
    int8_t *y;
    int nd;
    const long *shape, *sa, *sb;
    const be_qbin *p;
    long n, piece, pieces, ia, ib;
} qbinary_call;

/* items lo .. hi-1: pieces of up to `piece` elements of one output row */
static void qbinary_items(void *ctx, int tid, long lo, long hi) {
    const qbinary_call *c = ctx;
    const int8_t *a = c->a, *b = c->b;
    int8_t *y = c->y;
    const int nd = c->nd;
    const long *shape = c->shape, *sa = c->sa, *sb = c->sb;
    const be_qbin *p = c->p;
    const long n = c->n, piece = c->piece, pieces = c->pieces, ia = c->ia, ib = c->ib;
    (void)tid;
    for (long it = lo; it < hi; it++) {
        long r = it / pieces, oa = 0, ob = 0;
        const long j0 = (it % pieces) * piece, len = n - j0 < piece ? n - j0 : piece;
        const long yo = r * n + j0;
        for (int d = nd - 2; d >= 0; d--) {
            const long k = r % shape[d];
            r /= shape[d];
            oa += k * sa[d];
            ob += k * sb[d];
        }
        row(a + oa + j0 * ia, ia, b + ob + j0 * ib, ib, y + yo, len, p);
    }
}

void be_qbinary_i8(const int8_t *a, const int8_t *b, int8_t *y, int nd, const long *shape, const long *sa,
                   const long *sb, const be_qbin *p, int threads) {
    const long n = nd ? shape[nd - 1] : 1, piece = 4096;
    long rows = 1;
    for (int d = 0; d + 1 < nd; d++) rows *= shape[d];
    const long pieces = (n + piece - 1) / piece, items = rows * pieces;
    const long ia = nd ? sa[nd - 1] : 0, ib = nd ? sb[nd - 1] : 0;
    const int par = threads > 1 && rows * n > 32768 && items > 1;
    qbinary_call c = {a, b, y, nd, shape, sa, sb, p, n, piece, pieces, ia, ib};
    be_parallel(par ? threads : 1, items, qbinary_items, &c);
}

typedef struct {
    const int8_t *x;
    int8_t *y;
    const int8_t *table;
    int32_t x_zp, y_zp, m, s, lim;
    long n, piece;
} qmap_call;

static void qlut_range(void *ctx, int tid, long lo, long hi) {
    const qmap_call *c = ctx;
    const int8_t *x = c->x, *table = c->table;
    int8_t *y = c->y;
    (void)tid;
    long i = lo;
    QLUT_VEC()
    for (; i < hi; i++) y[i] = table[x[i] + 128];
}

void be_qlut_i8(const int8_t *x, int8_t *y, const int8_t *table, long n, int threads) {
    const int par = threads > 1 && n > 65536;
    qmap_call c = {x, y, table, 0, 0, 0, 0, 0, n, 0};
    be_parallel(par ? threads : 1, n, qlut_range, &c);
}

/* pieces first .. last-1 of `piece` elements (QREQ_VEC may name locals lo and hi) */
static void qrequant_pieces(void *ctx, int tid, long first, long last) {
    const qmap_call *c = ctx;
    const int8_t *x = c->x;
    int8_t *y = c->y;
    const int32_t x_zp = c->x_zp, y_zp = c->y_zp, m = c->m, s = c->s, lim = c->lim;
    const long n = c->n, piece = c->piece;
    (void)tid;
    for (long it = first; it < last; it++) {
        long i = it * piece;
        const long end = i + piece < n ? i + piece : n;
        QREQ_VEC()
        for (; i < end; i++) y[i] = be_rq1(x[i] - x_zp, m, s, lim, y_zp, -128, 127);
    }
}

void be_qrequant_i8(const int8_t *x, int8_t *y, long n, int32_t x_zp, int32_t y_zp, int32_t m, int32_t s,
                    int32_t lim, int threads) {
    const long piece = 4096, items = (n + piece - 1) / piece;
    const int par = threads > 1 && n > 32768;
    qmap_call c = {x, y, 0, x_zp, y_zp, m, s, lim, n, piece};
    be_parallel(par ? threads : 1, items, qrequant_pieces, &c);
}

#endif
