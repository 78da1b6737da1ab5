/* int8 elementwise kernels: QAdd / QMul with broadcasting, QLut, QRequant (QuantizeLinear and
 * DequantizeLinear: quantize.c).
 *
 * Algorithm (binary ops):
 *  1. the output is cut into work items (one row of the innermost dimension, or a 4096-element piece of it);
 *     an item finds its operands' offsets from its row index and the per-dimension strides;
 *  2. a row whose operands step by 0 or 1 runs 16 lanes at a time: widen to int32, subtract the zero points;
 *     QAdd forms both 64-bit products (_mm256_mul_epi32 on even and odd lanes), adds them and the rounding term
 *     biased by 2^62, shifts logically and removes the bias in 32 bits (exact: |result| < 2^31 when shift >= 10,
 *     smaller shifts take the scalar path); QMul multiplies in int32 and requantises like the GEMM epilogue;
 *  3. tails and strided rows run the scalar rule (int64).
 * NEON runs step 2 on 8 lanes: QAdd with vmull_s32/vmlal_s32 into int64, a flooring vshlq_s64 and saturating
 * narrowing (exact for every shift: past int32 the output saturates anyway); QMul and QRequant with be_rq4n.
 * Every element reads its operands before its output is written, so outputs may alias same-shaped inputs.
 */
#include "qelementwise.h"

#include "qelementwise_common.h"

/* no vector paths (qelementwise_loops.h runs the portable code) */
#define QBIN_ROW_VEC()
#define QREQ_VEC()

#include "qelementwise_loops.h"
