/* Bare-metal AArch64 entry for the instruction-count images (QEMU virt, EL1, MMU off): the stack, FP/SIMD on,
 * a vector table whose every entry reports a fault over semihosting, then be_c_start (startup.c). */
    .section .text.boot, "ax"
    .global _start
_start:
    ldr x0, =__stack_top
    mov sp, x0
    mrs x0, cpacr_el1
    orr x0, x0, #(3 << 20)          /* FPEN: FP/SIMD at EL1 and EL0 without traps */
    msr cpacr_el1, x0
    ldr x0, =be_a64_vectors
    msr vbar_el1, x0
    isb
    bl be_c_start
1:  b 1b

    .section .text.vectors, "ax"
    .balign 2048
be_a64_vectors:
    .rept 16
    .balign 128
    b be_fault_handler
    .endr
