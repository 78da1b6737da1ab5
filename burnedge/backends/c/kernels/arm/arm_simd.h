/* Internal to the ARM kernel set (kernels/arm/): every file of it assumes NEON (aarch64, or armv7 with
 * -mfpu=neon*); the sdot paths also need BE_ISA_DOTPROD. */
#ifndef BURNEDGE_ARM_SIMD_H
#define BURNEDGE_ARM_SIMD_H

#include "isa.h"

#ifndef BE_ISA_NEON
#error "the ARM kernel set needs NEON (aarch64, or armv7 with -mfpu=neon*): build the reference set alone"
#endif
#include <arm_neon.h>

#define BE_AI inline __attribute__((always_inline))

#endif
