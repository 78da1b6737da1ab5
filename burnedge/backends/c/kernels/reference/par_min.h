/* Internal to the kernel sets: how much work a kernel needs before it splits over the worker pool (workers.h).
 *
 * The least work worth a second thread, in multiply-adds of an int8 GEMM or convolution: about 5 us of one core
 * at the set's int8 rate (VNNI ~200 GMAC/s, AVX2 ~100, sdot ~50, other targets ~20). Below it the loop runs on
 * the caller alone: handing out chunks, a worker's first touch of the data and the wait for the last chunk
 * (benchmarks/bench_workers.py measures them: a few tenths of a microsecond with the workers awake, tens when a
 * sleeping one must be woken) would eat what the split saves.
 */
#ifndef BURNEDGE_PAR_MIN_H
#define BURNEDGE_PAR_MIN_H

#include "isa.h"

#if defined(BE_ISA_X86_VNNI512) || defined(BE_ISA_X86_AVXVNNI)
#define BE_PAR_MIN_QMACS 1000000.0
#elif defined(BE_ISA_X86_AVX2) || defined(BE_ISA_DOTPROD)
#define BE_PAR_MIN_QMACS 500000.0
#else
#define BE_PAR_MIN_QMACS 100000.0
#endif

#endif
