/* The bundle's test vectors on the board: each input copied into the arena, one inference, each output compared
 * with the host's reference (integer outputs bit for bit, float ones within the tolerance relative to the largest
 * |reference|), then PASS or FAIL with the output error. Also printed, for `burnedge emulate` to read back:
 *
 *   out V K HEX          output K of vector V, its bytes
 *   calibration I N      SysTick ticks of a loop of I instructions: ticks per instruction, without trusting a clock
 *   ticks V N            SysTick ticks of vector V's inference (under QEMU -icount: proportional to instructions)
 *   stack N              the stack's high-water mark in bytes, from the painted stack
 *   PASS | FAIL ...      the verdict
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "model.h"
#include "semihost.h"
#include "vectors.h"

extern uint32_t be_stack_used(void), be_stack_reserved(void);

#if defined(__aarch64__)
/* -- Cortex-A (the instruction-count images, benchmarks/arm_icount): the cycle counter PMCCNTR_EL0, which QEMU
 * runs on its virtual clock (under -icount shift=0: one count per instruction) -- */
static void be_clock_start(void) {}

static uint64_t be_ticks(void) {
    uint64_t v;
    __asm volatile("isb\n\tmrs %0, pmccntr_el0" : "=r"(v));
    return v;
}

#define BE_CALIBRATION_LOOP() /* 2,000,000 instructions */                                                       \
    __asm volatile("mov x0, #16960\n\tmovk x0, #15, lsl #16\n1:\n\tsubs x0, x0, #1\n\tb.ne 1b" ::: "x0", "cc")
#else
/* -- SysTick as a 64-bit counter of core clock ticks (its 24-bit count wraps; the handler counts the wraps) -- */
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
static volatile uint32_t be_wraps;

void be_systick_handler(void) { be_wraps++; }

static uint64_t be_ticks(void) {
    uint32_t w, v;
    do {
        w = be_wraps;
        v = SYST_CVR;
    } while (w != be_wraps);
    return ((uint64_t)w << 24) + (0xFFFFFFu - v);
}

static void be_clock_start(void) {
    SYST_RVR = 0xFFFFFFu;
    SYST_CVR = 0;
    SYST_CSR = 7u; /* enabled, interrupting on wrap, counting the core clock */
    while (SYST_CVR == 0u) {
    } /* its first tick loads RVR; before it the count means nothing */
}

#define BE_CALIBRATION_LOOP() /* 2,000,000 instructions */                                                       \
    __asm volatile("ldr r0, =1000000\n1:\n\tsubs r0, r0, #1\n\tbne 1b" ::: "r0", "cc")
#endif

/* -- printing without printf -- */
static char be_line[160];
static int be_len;

static void put(const char *s) {
    while (*s && be_len < (int)sizeof be_line - 1) be_line[be_len++] = *s++;
}
static void flush(void) {
    be_line[be_len++] = '\n';
    be_line[be_len] = 0;
    be_puts(be_line);
    be_len = 0;
}
static void put_u(uint64_t v) {
    char buf[24];
    int i = 23;
    buf[i] = 0;
    do buf[--i] = (char)('0' + v % 10); while ((v /= 10) && i);
    put(buf + i);
}
static void put_hex(const uint8_t *p, uint32_t n) {
    static const char digits[] = "0123456789abcdef";
    char two[3] = {0, 0, 0};
    for (uint32_t i = 0; i < n; i++) {
        if (be_len >= (int)sizeof be_line - 3) {
            be_line[be_len] = 0;
            be_puts(be_line);
            be_len = 0;
        }
        two[0] = digits[p[i] >> 4];
        two[1] = digits[p[i] & 15];
        put(two);
    }
}
/* |x| as d.ddde-XX (enough to read an error) */
static void put_e(float x) {
    if (x != x) { put("nan"); return; }
    if (x < 0) x = -x;
    int e = 0;
    if (x > 0) {
        while (x >= 10.0f) { x /= 10.0f; e++; }
        while (x < 1.0f) { x *= 10.0f; e--; }
    }
    uint32_t m = (uint32_t)(x * 1000.0f + 0.5f);
    put_u(m / 1000);
    put(".");
    char frac[4] = {(char)('0' + m / 100 % 10), (char)('0' + m / 10 % 10), (char)('0' + m % 10), 0};
    put(frac);
    put(e < 0 ? "e-" : "e+");
    put_u((uint64_t)(e < 0 ? -e : e));
}

/* the error of output k against its reference: the largest |difference| (floats: relative to the largest |ref|) */
static float output_error(int k, const uint8_t *got, const uint8_t *ref, uint32_t n) {
    if (be_out_kind[k] == 'f') {
        const float *g = (const float *)got, *r = (const float *)ref;
        float worst = 0.0f, scale = 0.0f;
        for (uint32_t i = 0; i < n / 4; i++) {
            float d = fabsf(g[i] - r[i]);
            if (!(d <= worst)) worst = d; /* a NaN is the worst */
            if (fabsf(r[i]) > scale) scale = fabsf(r[i]);
        }
        return scale > 0.0f ? worst / scale : worst;
    }
    return memcmp(got, ref, n) == 0 ? 0.0f : 1.0f;
}

/* called by the fault handler (startup.c): the stack's mark and why, so that a fault after the stack ran out of
 * its reserve says so (the usual cause when a stack_bytes is too small) */
void be_fault_report(void) {
    uint32_t used = be_stack_used(), reserved = be_stack_reserved();
    be_len = 0; /* drop a line the fault cut short */
    put("stack ");
    put_u(used);
    flush();
    if (used >= reserved) {
        put("FAIL: a hard fault: the stack used all of its ");
        put_u(reserved);
        put(" bytes (raise stack_bytes in the target file)");
    } else {
        put("FAIL: a hard fault (a bad memory access)");
    }
    flush();
}

int main(void) {
    be_clock_start();
    uint64_t c0 = be_ticks();
    BE_CALIBRATION_LOOP();
    uint64_t c1 = be_ticks();
    put("calibration 2000000 ");
    put_u(c1 - c0);
    flush();
    int failed = 0;
    float worst = 0.0f;
    for (int v = 0; v < BE_VECTORS; v++) {
        for (int k = 0; k < BE_NUM_INPUTS; k++) memcpy(be_input(k), be_vec_in[v][k], be_input_bytes(k));
        uint64_t t0 = be_ticks();
        int rc = be_invoke();
        uint64_t t1 = be_ticks();
        if (rc) {
            put("FAIL: the model returned ");
            put_u((uint64_t)rc);
            flush();
            return 2;
        }
        put("ticks ");
        put_u((uint64_t)v);
        put(" ");
        put_u(t1 - t0);
        flush();
        for (int k = 0; k < BE_NUM_OUTPUTS; k++) {
            const uint8_t *got = (const uint8_t *)be_output(k);
            uint32_t n = (uint32_t)be_output_bytes(k);
            put("out ");
            put_u((uint64_t)v);
            put(" ");
            put_u((uint64_t)k);
            put(" ");
            put_hex(got, n);
            flush();
            float err = output_error(k, got, be_vec_ref[v][k], n);
            if (!(err <= be_out_tol[k])) failed = 1;
            if (!(err <= worst)) worst = err;
        }
    }
    put("stack ");
    put_u(be_stack_used());
    flush();
    if (be_stack_used() >= be_stack_reserved()) {
        put("FAIL: the stack used all of its ");
        put_u(be_stack_reserved());
        put(" bytes (raise stack_bytes in the target file)");
        flush();
        return 4;
    }
    put(failed ? "FAIL" : "PASS");
    put(": ");
    put_u(BE_VECTORS);
    put(" vectors, output error ");
    put_e(worst);
    flush();
    return failed;
}
