/* Semihosting (Arm's debug-host calls, `bkpt 0xAB`): the test runner's only I/O; QEMU serves it with
 * -semihosting-config enable=on. The model and the kernels never use it. */
#ifndef BE_SEMIHOST_H
#define BE_SEMIHOST_H

#include <stdint.h>

static inline int be_semihost(int op, const void *arg) {
    register int r0 __asm("r0") = op;
    register const void *r1 __asm("r1") = arg;
    __asm volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static inline void be_puts(const char *s) { be_semihost(0x04, s); } /* SYS_WRITE0 */

/* SYS_EXIT: QEMU exits with status 0 for ADP_Stopped_ApplicationExit, 1 for any other reason */
__attribute__((noreturn)) static inline void be_exit(int status) {
    be_semihost(0x18, (const void *)(uintptr_t)(status == 0 ? 0x20026u : 0x20024u));
    for (;;) {
    }
}

#endif
