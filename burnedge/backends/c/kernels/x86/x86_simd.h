/* Internal to the x86 kernel set (kernels/x86/): every file of it assumes AVX2 and FMA. */
#ifndef BURNEDGE_X86_SIMD_H
#define BURNEDGE_X86_SIMD_H

#include "isa.h"

#ifndef BE_ISA_X86_AVX2
#error "the x86 kernel set needs AVX2 and FMA (-mavx2 -mfma, -march=haswell or newer): build the reference set alone"
#endif
#include <immintrin.h>

#endif
