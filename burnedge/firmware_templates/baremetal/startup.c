/* Cortex-M startup for a burnedge firmware: the vector table, the reset handler (FPU on where the core has one,
 * .data copied from flash, .bss zeroed, the stack painted so the run can measure its high-water mark), and fault
 * handlers that report over semihosting and stop the emulator.
 *
 * The symbols come from the generated linker script (link.ld):
 *
 *   FLASH: | vectors | .text | .rodata (weights, tables) | .data's initial values |
 *   RAM:   | .data | .bss (arena, statics) | stack (stack_bytes, painted) |
 *                                          ^ __stack_limit                ^ __stack_top (initial SP)
 */
#include <stdint.h>

#include "semihost.h"

extern uint32_t __data_load__, __data_start__, __data_end__, __bss_start__, __bss_end__;
extern uint32_t __stack_limit, __stack_top;
extern int main(void);

#define BE_STACK_PAINT 0xA5A5A5A5u
#define BE_CPACR (*(volatile uint32_t *)0xE000ED88u)

void be_reset_handler(void);
void be_fault_handler(void);
void be_systick_handler(void);

__attribute__((noreturn)) void be_reset_handler(void) {
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
    BE_CPACR |= 0xFu << 20; /* CP10, CP11: full access (the FPU and MVE registers) */
    __asm volatile("dsb\n\tisb" ::: "memory");
#endif
    for (uint32_t *src = &__data_load__, *dst = &__data_start__; dst < &__data_end__;) *dst++ = *src++;
    for (uint32_t *dst = &__bss_start__; dst < &__bss_end__;) *dst++ = 0;
    uint32_t *sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    for (uint32_t *p = &__stack_limit; p < sp - 16; p++) *p = BE_STACK_PAINT; /* leave this frame alone */
    be_exit(main());
}

/* the stack bytes ever used: from the top down to the lowest word no longer holding the paint */
uint32_t be_stack_used(void) {
    const uint32_t *p = &__stack_limit;
    while (p < &__stack_top && *p == BE_STACK_PAINT) p++;
    return (uint32_t)((const char *)&__stack_top - (const char *)p);
}

/* the bytes reserved for it (link.ld): a run that used them all may have run over into .bss */
uint32_t be_stack_reserved(void) { return (uint32_t)((const char *)&__stack_top - (const char *)&__stack_limit); }

void be_fault_handler(void) {
    be_puts("FAIL: a hard fault (a bad memory access or a stack overflow)\n");
    be_exit(3);
}

__attribute__((weak)) void be_systick_handler(void) {}

typedef void (*be_vector)(void);

__attribute__((section(".vectors"), used)) const be_vector be_vectors[16] = {
    (be_vector)(uintptr_t)&__stack_top, /* initial stack pointer */
    be_reset_handler,
    be_fault_handler, /* NMI */
    be_fault_handler, /* HardFault */
    be_fault_handler, /* MemManage */
    be_fault_handler, /* BusFault */
    be_fault_handler, /* UsageFault */
    be_fault_handler, /* SecureFault (ARMv8-M) */
    0, 0, 0,
    be_fault_handler, /* SVCall */
    be_fault_handler, /* DebugMonitor */
    0,
    be_fault_handler, /* PendSV */
    be_systick_handler,
};
