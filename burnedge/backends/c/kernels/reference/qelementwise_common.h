/* Internal to the kernel sets: the scalar QAdd / QMul rule of qelementwise.c, which every set's vector rows
 * finish with (reference/qelementwise.c has the algorithm). */
#ifndef BURNEDGE_QELEMENTWISE_COMMON_H
#define BURNEDGE_QELEMENTWISE_COMMON_H

#include "qelementwise.h"

static inline int8_t qadd1(int32_t a, int32_t b, const be_qbin *p) {
    const int64_t v = (int64_t)(a - p->a_zp) * p->am + (int64_t)(b - p->b_zp) * p->bm;
    const int64_t y = p->y_zp + ((v + ((int64_t)1 << (p->shift - 1))) >> p->shift);
    return (int8_t)(y < p->lo ? p->lo : (y > p->hi ? p->hi : y));
}

static inline int8_t qmul1(int32_t a, int32_t b, const be_qbin *p) {
    return be_rq1((a - p->a_zp) * (b - p->b_zp), p->m, p->s, p->lim, p->y_zp, p->lo, p->hi);
}

#endif
