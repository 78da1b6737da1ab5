/* With -DBE_STEP_PROFILE (image(..., profile=True)): before the runner, one inference of vector 0 step by step,
 * printing "step S N" (N: instructions of plan step S under -icount), for `bench_arm_icount.py --profile`. */
#include <stdint.h>
#include <string.h>

#include "model.h"
#include "semihost.h"
#include "vectors.h"

#ifdef BE_STEP_PROFILE
extern uint8_t be_arena[]; /* model.c's, made visible for the profile */
int be_model_step(uint8_t *arena, const uint8_t *weights, int threads, int step);
int be_model_steps(void);

static uint64_t ticks(void) {
    uint64_t v;
    __asm volatile("isb\n\tmrs %0, pmccntr_el0" : "=r"(v));
    return v;
}

static void put_line(const char *what, uint64_t a, uint64_t b) {
    char line[64], digits[24];
    int n = 0;
    while (*what) line[n++] = *what++;
    for (int k = 0; k < 2; k++) {
        uint64_t v = k ? b : a;
        int i = 23;
        digits[i] = 0;
        do digits[--i] = (char)('0' + v % 10); while ((v /= 10) && i);
        line[n++] = ' ';
        while (digits[i]) line[n++] = digits[i++];
    }
    line[n++] = '\n';
    line[n] = 0;
    be_puts(line);
}

void be_profile_steps(void) {
    for (int k = 0; k < BE_NUM_INPUTS; k++) memcpy(be_input(k), be_vec_in[0][k], be_input_bytes(k));
    for (int s = 0; s < be_model_steps(); s++) {
        uint64_t t0 = ticks();
        be_model_step(be_arena, be_weights, 1, s);
        put_line("step", (uint64_t)s, ticks() - t0);
    }
}
#else
void be_profile_steps(void) {}
#endif
