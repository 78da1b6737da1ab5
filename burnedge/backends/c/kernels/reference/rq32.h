/* Internal to the kernel sets: qgemm.h's requantisation (be_rq1) in 32-bit operations, for 32-bit cores
 * (Cortex-M) where a 64-bit shift by a variable costs a dozen instructions. Equal to be_rq1 for every normalised
 * parameter (1 <= s <= 62, qgemm.h):
 *   s >= 33: lim is INT32_MAX (no clamp); with P = acc * m (one 32 x 32 -> 64 multiply) the rounding term
 *            2^(s-1) has no low word, so floor((P + 2^(s-1)) / 2^s) = (hi(P) + 2^(s-33)) >> (s-32): the low word
 *            of P never reaches the result (|hi(P)| < 2^30: no overflow);
 *   s == 32: the rounding term is 2^31 in the low word: hi(P) plus its carry, lo(P) >> 31;
 *   s <= 31: the clamped accumulator (|a| <= 2^10) times m, exactly as be_rq1 (rare: large scale ratios). */
#ifndef BURNEDGE_RQ32_H
#define BURNEDGE_RQ32_H

#include "qgemm.h"

static inline int8_t be_rq1_32(int32_t acc, int32_t m, int32_t s, int32_t lim, int32_t zp, int32_t lo, int32_t hi) {
    int32_t t;
    if (s >= 32) {
        const int64_t p = (int64_t)acc * m;
        const int32_t ph = (int32_t)(p >> 32);
        t = s == 32 ? ph + (int32_t)((uint32_t)p >> 31) : (ph + (1 << (s - 33))) >> (s - 32);
    } else {
        const int32_t a = acc < -lim ? -lim : (acc > lim ? lim : acc);
        t = (int32_t)(((int64_t)a * m + ((int64_t)1 << (s - 1))) >> s);
    }
    const int32_t y = zp + t;
    return (int8_t)(y < lo ? lo : (y > hi ? hi : y));
}

#endif
