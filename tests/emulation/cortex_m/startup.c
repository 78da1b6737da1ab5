/* A bare-metal start for the kernel checks under QEMU (mps2/mps3 boards): the vector table, the FPU (and MVE)
 * enabled where the core has one, .bss zeroed (QEMU loads .data in place), main, then the exit through
 * semihosting (SYS_EXIT: QEMU's exit status 0 for ApplicationExit, 1 otherwise). Output is SYS_WRITE0. */
#include <stdint.h>

extern uint32_t __bss_start__, __bss_end__, __stack_top;
int main(void);

static int semihost(int op, const void *arg) {
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void cm_puts(const char *s) { semihost(0x04, s); }

void cm_exit(int ok) {
    semihost(0x18, (const void *)(uintptr_t)(ok ? 0x20026 : 0x20023)); /* ApplicationExit / RunTimeErrorUnknown */
    for (;;) {
    }
}

void Reset_Handler(void) {
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
    *(volatile uint32_t *)0xE000ED88 |= 0xFu << 20; /* CPACR: CP10, CP11 full access (FPU, MVE) */
    __asm__ volatile("dsb\n isb");
#endif
    for (uint32_t *p = &__bss_start__; p < &__bss_end__; p++) *p = 0;
    cm_exit(main() == 0);
}

__attribute__((weak)) void SysTick_Handler(void) {}

static void Fault_Handler(void) {
    cm_puts("FAULT\n");
    cm_exit(0);
}

__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))(&__stack_top), Reset_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, 0, 0, 0, 0, Fault_Handler, Fault_Handler, 0, Fault_Handler, SysTick_Handler,
};
