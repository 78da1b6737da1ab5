/* C start of the AArch64 instruction-count image: .bss zeroed, the thread pointer set to a zeroed block (libm's
 * errno is thread-local), the stack painted so the run can measure its high-water mark, the cycle counter on,
 * then main() and a semihosting exit. Everything is in RAM (QEMU loads the ELF there), so .data needs no copy.
 *
 *   RAM: | .text .rodata (weights) .data | .bss (arena) | stack (painted) |
 *                                                       ^ __stack_limit   ^ __stack_top */
#include <stdint.h>

#include "semihost.h"

extern uint32_t __bss_start__, __bss_end__, __stack_limit, __stack_top;
extern int main(void);

#define BE_STACK_PAINT 0xA5A5A5A5u

static uint64_t be_tls[512] __attribute__((aligned(64)));

void be_c_start(void);
void be_profile_steps(void);
void be_fault_handler(void);

__attribute__((noreturn)) void be_c_start(void) {
    for (uint32_t *p = &__bss_start__; p < &__bss_end__;) *p++ = 0;
    __asm volatile("msr tpidr_el0, %0" ::"r"(be_tls));
    /* PMCCNTR_EL0: enabled (PMCR.E, 64-bit LC), counting at EL1; under -icount shift=0 it counts instructions */
    __asm volatile("msr pmcr_el0, %0\n\tmsr pmcntenset_el0, %1\n\tmsr pmccfiltr_el0, xzr\n\tisb" ::"r"(0x41ul),
                   "r"(1ul << 31));
    uint32_t *sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    for (uint32_t *p = &__stack_limit; p < sp - 64; p++) *p = BE_STACK_PAINT;
    be_profile_steps(); /* profile.c: nothing unless built with -DBE_STEP_PROFILE */
    be_exit(main());
}

uint32_t be_stack_used(void) {
    const uint32_t *p = &__stack_limit;
    while (p < &__stack_top && *p == BE_STACK_PAINT) p++;
    return (uint32_t)((const char *)&__stack_top - (const char *)p);
}

uint32_t be_stack_reserved(void) { return (uint32_t)((const char *)&__stack_top - (const char *)&__stack_limit); }

void be_fault_report(void); /* main.c */

void be_fault_handler(void) {
    be_fault_report();
    be_exit(3);
}

/* string.h for the model and the kernels (no libc on bare metal: glibc's own pick an ISA at load time) */
void *memcpy(void *restrict d, const void *restrict s, unsigned long n) {
    unsigned char *dp = d;
    const unsigned char *sp = s;
    for (; n >= 16; n -= 16, dp += 16, sp += 16) __builtin_memcpy(dp, sp, 16);
    while (n--) *dp++ = *sp++;
    return d;
}

void *memmove(void *d, const void *s, unsigned long n) {
    unsigned char *dp = d;
    const unsigned char *sp = s;
    if (dp <= sp || dp >= sp + n) return memcpy(d, s, n);
    while (n--) dp[n] = sp[n];
    return d;
}

void *memset(void *d, int c, unsigned long n) {
    unsigned char *dp = d;
    for (; n >= 16; n -= 16, dp += 16) __builtin_memset(dp, c, 16);
    while (n--) *dp++ = (unsigned char)c;
    return d;
}

int memcmp(const void *a, const void *b, unsigned long n) {
    const unsigned char *x = a, *y = b;
    for (; n; n--, x++, y++)
        if (*x != *y) return *x < *y ? -1 : 1;
    return 0;
}
