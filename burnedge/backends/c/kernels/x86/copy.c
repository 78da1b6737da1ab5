/* Data movement kernels: the N-d strided copy behind Transpose / Slice / Concat / Split / Expand / Tile /
 * DepthToSpace, a pattern fill, and the table-driven copy behind Pad and nearest Resize.
 *
 * be_copy_nd, in steps:
 *   1. the lowering has already dropped size-1 dims, merged dims that are contiguous on both sides and ordered
 *      the dims (the loop order of a pure copy is free), so the loop nest here is short;
 *   2. the last dim is a "row": a memcpy when both sides are contiguous, else a typed strided loop;
 *   3. a transpose (the second-last dim contiguous in the input, the last contiguous in the output) is copied in
 *      square tiles so that both reads and writes stay in cache lines;
 *   4. rows (or tile bands) are split into `threads` equal ranges; each range finds its first multi-index by
 *      division and then walks an odometer. Every element is written once, by one thread.
 * be_copy_table_nd walks dense output rows the same way: the outer dims' tables give the row's source offset
 * (or mark it as fill), the last dim's table gives each element, with a memcpy over its consecutive middle.
 */
#include <string.h>

#include "burnedge.h"
#include "copy.h"
#include "x86_simd.h"

/* out[a * osa + b] = in[a + b * isb] for a, b < 8, 4-byte elements: 8 row loads, an in-register transpose
 * (pairs, then quads, then 128-bit halves), 8 row stores */
static void transpose8x8_u32(uint32_t *o, const uint32_t *i, int64_t osa, int64_t isb) {
    __m256 r[8], t[8], q[8];
    for (int k = 0; k < 8; k++) r[k] = _mm256_loadu_ps((const float *)(i + k * isb));
    for (int k = 0; k < 8; k += 2) {
        t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
        t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
    }
    for (int k = 0; k < 8; k += 4) {
        q[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
        q[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xEE);
        q[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
        q[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xEE);
    }
    for (int k = 0; k < 4; k++) {
        _mm256_storeu_ps((float *)(o + k * osa), _mm256_permute2f128_ps(q[k], q[k + 4], 0x20));
        _mm256_storeu_ps((float *)(o + (k + 4) * osa), _mm256_permute2f128_ps(q[k], q[k + 4], 0x31));
    }
}

/* 4-byte elements: 8x8 blocks through registers, the ragged edges element by element */
static inline __attribute__((always_inline)) int copy_tile_fast(uint8_t *restrict o, const uint8_t *restrict i,
                                                                int elem, int64_t na, int64_t nb, int64_t osa,
                                                                int64_t isb) {
    if (elem == 4 && na >= 8 && nb >= 8) {
        uint32_t *restrict po = (uint32_t *)o;
        const uint32_t *restrict pi = (const uint32_t *)i;
        const int64_t na8 = na & ~(int64_t)7, nb8 = nb & ~(int64_t)7;
        for (int64_t b = 0; b < nb8; b += 8)
            for (int64_t a = 0; a < na8; a += 8) transpose8x8_u32(po + a * osa + b, pi + a + b * isb, osa, isb);
        for (int64_t a = 0; a < na; a++) /* the ragged edges */
            for (int64_t b = a < na8 ? nb8 : 0; b < nb; b++) po[a * osa + b] = pi[a + b * isb];
        return 1;
    }
    return 0;
}

#include "copy_loops.h"
