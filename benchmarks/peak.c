/* The arithmetic limit of one core, measured: `peak MODE SECONDS` prints "MODE OPS_PER_SECOND" (the best short trial).

Each mode runs one kind of instruction on independent registers (enough chains to cover the latency, no loads), so
the figure is the issue rate of the vector units at the clock the core runs at now. Inline assembly, so no
compiler can hoist or fold the work; the caller picks a mode the CPU has (/proc/cpuinfo), since an instruction it
lacks faults. Ops count 2 per multiply-add (fp32 FLOP or int8 OP):
  fma512   vfmadd231ps zmm    16 lanes x 2 = 32 FLOP per instruction
  fma256   vfmadd231ps ymm     8 lanes x 2 = 16 FLOP
  vnni512  vpdpbusd zmm       64 u8 x s8 MACs = 128 OP
  vnni256  {vex} vpdpbusd ymm 32 MACs = 64 OP (AVX-VNNI)
  avx2i8   vpmaddubsw + vpmaddwd + vpaddd ymm: 32 MACs = 64 OP per triple
*/
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

#define REP10(x) x x x x x x x x x x

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

#if defined(__x86_64__)
/* one block: 12 independent accumulators (registers 0-11), sources in the top registers */
#define FMA_BLOCK(r)                                                                                          \
    "vfmadd231ps %%" r "14, %%" r "15, %%" r "0\n\t vfmadd231ps %%" r "14, %%" r "15, %%" r "1\n\t"              \
    "vfmadd231ps %%" r "14, %%" r "15, %%" r "2\n\t vfmadd231ps %%" r "14, %%" r "15, %%" r "3\n\t"               \
    "vfmadd231ps %%" r "14, %%" r "15, %%" r "4\n\t vfmadd231ps %%" r "14, %%" r "15, %%" r "5\n\t"               \
    "vfmadd231ps %%" r "14, %%" r "15, %%" r "6\n\t vfmadd231ps %%" r "14, %%" r "15, %%" r "7\n\t"               \
    "vfmadd231ps %%" r "14, %%" r "15, %%" r "8\n\t vfmadd231ps %%" r "14, %%" r "15, %%" r "9\n\t"               \
    "vfmadd231ps %%" r "14, %%" r "15, %%" r "10\n\t vfmadd231ps %%" r "14, %%" r "15, %%" r "11\n\t"
#define VNNI_BLOCK(p, r)                                                                                      \
    p "vpdpbusd %%" r "14, %%" r "15, %%" r "0\n\t" p "vpdpbusd %%" r "14, %%" r "15, %%" r "1\n\t"              \
    p "vpdpbusd %%" r "14, %%" r "15, %%" r "2\n\t" p "vpdpbusd %%" r "14, %%" r "15, %%" r "3\n\t"              \
    p "vpdpbusd %%" r "14, %%" r "15, %%" r "4\n\t" p "vpdpbusd %%" r "14, %%" r "15, %%" r "5\n\t"              \
    p "vpdpbusd %%" r "14, %%" r "15, %%" r "6\n\t" p "vpdpbusd %%" r "14, %%" r "15, %%" r "7\n\t"              \
    p "vpdpbusd %%" r "14, %%" r "15, %%" r "8\n\t" p "vpdpbusd %%" r "14, %%" r "15, %%" r "9\n\t"              \
    p "vpdpbusd %%" r "14, %%" r "15, %%" r "10\n\t" p "vpdpbusd %%" r "14, %%" r "15, %%" r "11\n\t"
/* six (product, accumulator) pairs: ymm0/1 ... ymm10/11; ymm13 holds int16 ones for vpmaddwd */
#define I8_PAIR(t, a)                                                                                         \
    "vpmaddubsw %%ymm14, %%ymm15, %%ymm" t "\n\t vpmaddwd %%ymm13, %%ymm" t ", %%ymm" t "\n\t"                   \
    "vpaddd %%ymm" t ", %%ymm" a ", %%ymm" a "\n\t"
#define I8_BLOCK I8_PAIR("0", "1") I8_PAIR("2", "3") I8_PAIR("4", "5") I8_PAIR("6", "7") I8_PAIR("8", "9") \
    I8_PAIR("10", "11")
#define CLOBBER12(r) r "0", r "1", r "2", r "3", r "4", r "5", r "6", r "7", r "8", r "9", r "10", r "11"

/* Each call: load the sources, zero the accumulators (fp32 stays normal), run 100 blocks, clear the upper halves
   (what the compiler's own SSE code may need); the 14 set-up instructions are about 1% of the call. */
static const float SRC = 1e-3f;
static const int ONES16 = 0x00010001;
#define PROLOGUE(r)                                                                                          \
    "vbroadcastss %[s], %%" r "14\n\t vbroadcastss %[s], %%" r "15\n\t vpbroadcastd %[o], %%ymm13\n\t"          \
    "vxorps %%ymm0, %%ymm0, %%ymm0\n\t vxorps %%ymm1, %%ymm1, %%ymm1\n\t vxorps %%ymm2, %%ymm2, %%ymm2\n\t"     \
    "vxorps %%ymm3, %%ymm3, %%ymm3\n\t vxorps %%ymm4, %%ymm4, %%ymm4\n\t vxorps %%ymm5, %%ymm5, %%ymm5\n\t"     \
    "vxorps %%ymm6, %%ymm6, %%ymm6\n\t vxorps %%ymm7, %%ymm7, %%ymm7\n\t vxorps %%ymm8, %%ymm8, %%ymm8\n\t"     \
    "vxorps %%ymm9, %%ymm9, %%ymm9\n\t vxorps %%ymm10, %%ymm10, %%ymm10\n\t vxorps %%ymm11, %%ymm11, %%ymm11\n\t"
#define RUN(r, block)                                                                                        \
    __asm__ volatile(PROLOGUE(r) REP10(REP10(block)) "vzeroupper\n\t" ::[s] "m"(SRC), [o] "m"(ONES16)        \
                     : CLOBBER12(r), "xmm13", "xmm14", "xmm15")

static double fma512(void) {
    RUN("zmm", FMA_BLOCK("zmm"));
    return 100.0 * 12 * 32;
}
static double fma256(void) {
    RUN("ymm", FMA_BLOCK("ymm"));
    return 100.0 * 12 * 16;
}
static double vnni512(void) {
    RUN("zmm", VNNI_BLOCK("", "zmm"));
    return 100.0 * 12 * 128;
}
static double vnni256(void) {
    RUN("ymm", VNNI_BLOCK("%{vex%} ", "ymm"));
    return 100.0 * 12 * 64;
}
static double avx2i8(void) {
    RUN("ymm", I8_BLOCK);
    return 100.0 * 6 * 64;
}
#endif

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: peak fma512|fma256|vnni512|vnni256|avx2i8 SECONDS\n");
        return 2;
    }
    double (*fn)(void) = NULL;
#if defined(__x86_64__)
    static const struct { const char *name; double (*fn)(void); } modes[] = {
        {"fma512", fma512}, {"fma256", fma256}, {"vnni512", vnni512}, {"vnni256", vnni256}, {"avx2i8", avx2i8}};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (!strcmp(argv[1], modes[i].name)) fn = modes[i].fn;
#endif
    if (!fn) {
        fprintf(stderr, "peak: unknown mode %s on this architecture\n", argv[1]);
        return 2;
    }
#if defined(__x86_64__)
    /* many short trials (100 calls, tens of microseconds), the best kept: on a busy machine some trials run
       without a context switch, and the fastest is the core's rate */
    double seconds = atof(argv[2]), best = 0, start = now();
    do {
        double ops = 0, t0 = now();
        for (int i = 0; i < 100; i++) ops += fn();
        double t = now() - t0;
        if (ops / t > best) best = ops / t;
    } while (now() - start < seconds);
    printf("%s %.6e\n", argv[1], best);
#endif
    return 0;
}
