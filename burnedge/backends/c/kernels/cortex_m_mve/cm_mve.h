/* Internal to the Cortex-M Helium kernel set (kernels/cortex_m_mve/): every file of it assumes integer MVE
 * (Armv8.1-M: eight 128-bit q registers, tail predication, gathers, VMLADAVA: 16 int8 products summed into a
 * general-purpose register), reached through arm_mve.h. */
#ifndef BURNEDGE_CM_MVE_H
#define BURNEDGE_CM_MVE_H

#include "isa.h"

#ifndef BE_ISA_MVE
#error "the Cortex-M Helium kernel set needs MVE (-mcpu=cortex-m55): build the reference set alone"
#endif
#include <arm_mve.h>

#define BE_AI inline __attribute__((always_inline))

#endif
