/* Internal to the Cortex-M DSP kernel set (kernels/cortex_m_dsp/): every file of it assumes the DSP extension's
 * 32-bit SIMD (SMLAD: two 16 x 16 products summed into an int32 in one instruction; SXTB16: bytes 0 and 2 of a
 * word sign-extended to two int16), reached through ACLE (arm_acle.h). */
#ifndef BURNEDGE_CM_DSP_H
#define BURNEDGE_CM_DSP_H

#include "isa.h"

#ifndef BE_ISA_CM_DSP
#error "the Cortex-M DSP kernel set needs the DSP extension (M4, M7, M33, M55): build the reference set alone"
#endif
#include <arm_acle.h>

#define BE_AI inline __attribute__((always_inline))

/* a 32-bit load from any address (v7-M/v8-M LDR takes unaligned addresses; LDRD and LDM would fault) */
static BE_AI uint32_t be_cm_ld32(const void *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* the DSP instructions ACLE leaves out (GCC does not form them from C either): SXTB16 of a word rotated by 8
 * (bytes 1 and 3 sign-extended to two int16), PKHBT (low half of lo, low half of hi on top), PKHTB (top half of
 * hi, top half of lo below) */
static BE_AI uint32_t be_cm_sxtb16_ror8(uint32_t w) {
    uint32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(w));
    return r;
}
static BE_AI uint32_t be_cm_pkhbt(uint32_t lo, uint32_t hi) {
    uint32_t r;
    __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(lo), "r"(hi));
    return r;
}
static BE_AI uint32_t be_cm_pkhtb(uint32_t hi, uint32_t lo) {
    uint32_t r;
    __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(hi), "r"(lo));
    return r;
}

/* the two pairs of a word of 4 int8 [b0, b1, b2, b3] as int16: *p0 = (b0, b1), *p1 = (b2, b3); of a B panel word
 * (qgemm.h): the pairs (B(2kp, c), B(2kp+1, c)) of columns c and c + 1 */
static BE_AI void be_cm_pairs(uint32_t w, uint32_t *p0, uint32_t *p1) {
    const uint32_t t = (uint32_t)__sxtb16((int8x4_t)w), u = be_cm_sxtb16_ror8(w);
    *p0 = be_cm_pkhbt(t, u);
    *p1 = be_cm_pkhtb(u, t);
}

#endif
