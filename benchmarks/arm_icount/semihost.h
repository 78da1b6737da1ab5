/* AArch64 semihosting (`hlt #0xf000`): the image's only I/O; QEMU serves it with -semihosting-config enable=on. */
#ifndef BE_SEMIHOST_H
#define BE_SEMIHOST_H

#include <stdint.h>

static inline long be_semihost(long op, const void *arg) {
    register long x0 __asm("x0") = op;
    register const void *x1 __asm("x1") = arg;
    __asm volatile("hlt #0xf000" : "+r"(x0) : "r"(x1) : "memory");
    return x0;
}

static inline void be_puts(const char *s) { be_semihost(0x04, s); } /* SYS_WRITE0 */

/* SYS_EXIT with its A64 parameter block: ADP_Stopped_ApplicationExit and the status */
__attribute__((noreturn)) static inline void be_exit(int status) {
    const uint64_t block[2] = {0x20026u, (uint64_t)status};
    be_semihost(0x18, block);
    for (;;) {
    }
}

#endif
