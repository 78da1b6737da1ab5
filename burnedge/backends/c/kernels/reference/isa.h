/* The one place that reads the compiler's ISA macros: kernel sources test these names, never __AVX2__ & co.
 *
 *   BE_ISA_X86_AVX2  x86 with AVX2 and FMA                          -> kernels/x86/
 *   BE_ISA_X86_AVX512F ... and AVX-512 F/BW/VL/DQ: the float kernels' zmm tiles (x86_zmm*.h; host on Zen 4 /
 *                    Skylake-SP and later, x86-64-v4; not x86-64-v3)
 *   BE_ISA_X86_VBMI  ... AVX512F and VBMI (vpermi2b: Ice Lake, Zen 4 and later; not x86-64-v4 alone)
 *   BE_ISA_X86_VNNI512 ... and AVX-512 F/BW/VL with VNNI (vpdpbusd zmm: x86-64-v4 + VNNI, Zen 4, Ice Lake)
 *   BE_ISA_X86_AVXVNNI ... and AVX-VNNI (the VEX vpdpbusd on ymm: Alder Lake, Zen 5) when VNNI512 is not there
 *   BE_ISA_NEON      ARM Advanced SIMD: aarch64, armv7 -mfpu=neon*  -> kernels/arm/
 *   BE_ISA_AARCH64   NEON in A64 (32 q registers, multiply by lane)
 *   BE_ISA_NEON_FMA  NEON with fused multiply-add (aarch64, armv7 neon-vfpv4)
 *   BE_ISA_DOTPROD   aarch64 with the int8 dot product (sdot: rpi5, jetson-orin)
 *   BE_ISA_CM_DSP    Cortex-M with the DSP extension (SMLAD, SXTB16: M4, M7, M33, M55) -> kernels/cortex_m_dsp/
 *   BE_ISA_MVE       Cortex-M with integer Helium/MVE (M55)                  -> kernels/cortex_m_mve/
 *   BE_ISA_MVE_FLOAT MVE with float lanes (M55 with its FPU)
 *
 * The build (build.py) picks the kernel sets a toolchain compiles; an optimised set's files stop with #error when
 * these say the compiler lacks their ISA. With BURNEDGE_PORTABLE none is defined: the reference set builds alone.
 */
#ifndef BURNEDGE_ISA_H
#define BURNEDGE_ISA_H

#ifndef BURNEDGE_PORTABLE
#if defined(__AVX2__) && defined(__FMA__)
#define BE_ISA_X86_AVX2 1
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
#define BE_ISA_X86_AVX512F 1
#if defined(__AVX512VBMI__)
#define BE_ISA_X86_VBMI 1 /* byte permutes across a zmm (vpermi2b): int8 table lookups */
#endif
#endif
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__)
#define BE_ISA_X86_VNNI512 1
#elif defined(__AVXVNNI__)
#define BE_ISA_X86_AVXVNNI 1
#endif
#endif
#if defined(__ARM_NEON)
#define BE_ISA_NEON 1
#if defined(__aarch64__)
#define BE_ISA_AARCH64 1
#if defined(__ARM_FEATURE_DOTPROD)
#define BE_ISA_DOTPROD 1
#endif
#endif
#if defined(__ARM_FEATURE_FMA)
#define BE_ISA_NEON_FMA 1
#endif
#endif
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#if defined(__ARM_FEATURE_DSP)
#define BE_ISA_CM_DSP 1
#endif
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#define BE_ISA_MVE 1
#if __ARM_FEATURE_MVE & 2
#define BE_ISA_MVE_FLOAT 1
#endif
#endif
#endif
#endif

/* the least work worth a second thread, in multiply-adds of an int8 GEMM or convolution (qgemm_loops.h,
 * qconv_loops.h, qconv_nhwc.c): about 5 us of one core at the rate the set reaches on such small products (VNNI
 * ~90 GMAC/s: a transformer's 0.5 M-MAC projections took 5.6 us on the device tool's Xeon, 2026-12-04; AVX2 ~100,
 * sdot ~50, other targets ~20). Below it the loop runs on the caller alone: handing out chunks, a worker's first touch
 * of the data and the wait for the last chunk (benchmarks/bench_workers.py measures them: a few tenths of a
 * microsecond with the workers awake, tens when a sleeping one must be woken) would eat what the split saves. */
#if defined(BE_ISA_X86_VNNI512) || defined(BE_ISA_X86_AVXVNNI)
#define BE_PAR_MIN_QMACS 400000.0
#elif defined(BE_ISA_X86_AVX2) || defined(BE_ISA_DOTPROD)
#define BE_PAR_MIN_QMACS 500000.0
#else
#define BE_PAR_MIN_QMACS 100000.0
#endif

/* the same for float work, in multiply-adds of a GEMM or convolution (gemm_loops.h, dense_w8_loops.h, conv.c,
 * conv_nhwc_loops.h). Measured, not derived: on the device tool's Xeon (AVX-512, 2026-12-04, one process, no other
 * engine) DS-CNN's 0.3-0.5 M-MAC convs split over two threads made the whole net 0.60-0.86x as fast as on one, and
 * 1.00-1.02x with this gate at 1 M (the likely cost: a split leaves a step's output in two cores' caches and the
 * next, single-threaded depthwise step reads half of it across: on an AVX2 EPYC VM those steps took 5.4 -> 6.4-7.4
 * us on two threads); on that VM the split still ran the net 1.00-1.23x as fast, so 200 K stays there. */
#if defined(BE_ISA_X86_AVX512F)
#define BE_PAR_MIN_MACS 1000000.0
#else
#define BE_PAR_MIN_MACS 200000.0
#endif

/* the least copy worth splitting over threads, in bytes (a padded input copy: conv_nhwc_jobs.h, qconv_nhwc_loops.h):
 * a smaller one is done before a second thread would have started its share */
#define BE_PAR_MIN_COPY_BYTES 32768.0

/* a spin-wait hint for the worker pool (workers.c): any build, portable ones too */
#if defined(__x86_64__) || defined(__i386__)
#define BE_CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__) || (defined(__ARM_ARCH) && __ARM_ARCH >= 7)
#define BE_CPU_RELAX() __asm__ __volatile__("yield" ::: "memory")
#else
#define BE_CPU_RELAX() __asm__ __volatile__("" ::: "memory")
#endif

#endif
