/* Internal to the Cortex-M Helium kernel set (kernels/cortex_m_mve/): every file of it assumes integer MVE
 * (Armv8.1-M: eight 128-bit q registers, tail predication, gathers, VMLADAVA: 16 int8 products summed into a
 * general-purpose register), reached through arm_mve.h. */
#ifndef BURNEDGE_CM_MVE_H
#define BURNEDGE_CM_MVE_H

#include "isa.h"

#ifndef BE_ISA_MVE
#error "the Cortex-M Helium kernel set needs MVE (-mcpu=cortex-m55): build the reference set alone"
#endif
#include <arm_mve.h>

#define BE_AI inline __attribute__((always_inline))

/* 4 int32 values (accumulator + bias) through qgemm.h's rule when every lane's s >= 33 (rq32.h's case): VMULH
 * gives the product's high word, VRSHL by down = 32 - s adds 2^(s-33) and shifts right arithmetically by s - 32;
 * + zp, clamp to [lo, hi] */
static BE_AI int32x4_t be_mve_rq_wide(int32x4_t v, int32x4_t m, int32x4_t down, int32_t zp, int32x4_t lo,
                                      int32x4_t hi) {
    return vminq_s32(vmaxq_s32(vaddq_n_s32(vrshlq_s32(vmulhq_s32(v, m), down), zp), lo), hi);
}

/* whether lanes i < n of s all take be_mve_rq_wide */
static BE_AI int be_mve_all_wide(int32x4_t s, int n) {
    return vminvq_s32(INT32_MAX, vpselq_s32(s, vdupq_n_s32(INT32_MAX), vctp32q((uint32_t)n))) >= 33;
}

#endif
