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

static inline __attribute__((always_inline)) int copy_tile_fast(uint8_t *restrict o, const uint8_t *restrict i,
                                                                int elem, int64_t na, int64_t nb, int64_t osa,
                                                                int64_t isb) {
    (void)o, (void)i, (void)elem, (void)na, (void)nb, (void)osa, (void)isb;
    return 0; /* the tiled loop does every transpose */
}

#include "copy_loops.h"
