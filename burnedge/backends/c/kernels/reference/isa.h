/* The one place that reads the compiler's ISA macros: kernel sources test these names, never __AVX2__ & co.
 *
 *   BE_ISA_X86_AVX2  x86 with AVX2 and FMA                          -> kernels/x86/
 *   BE_ISA_NEON      ARM Advanced SIMD: aarch64, armv7 -mfpu=neon*  -> kernels/arm/
 *   BE_ISA_AARCH64   NEON in A64 (32 q registers, multiply by lane)
 *   BE_ISA_NEON_FMA  NEON with fused multiply-add (aarch64, armv7 neon-vfpv4)
 *   BE_ISA_DOTPROD   aarch64 with the int8 dot product (sdot: rpi5, jetson-orin)
 *
 * The build (build.py) picks the kernel sets a toolchain compiles; an optimised set's files stop with #error when
 * these say the compiler lacks their ISA. With BURNEDGE_PORTABLE none is defined: the reference set builds alone.
 */
#ifndef BURNEDGE_ISA_H
#define BURNEDGE_ISA_H

#ifndef BURNEDGE_PORTABLE
#if defined(__AVX2__) && defined(__FMA__)
#define BE_ISA_X86_AVX2 1
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
#endif

#endif
