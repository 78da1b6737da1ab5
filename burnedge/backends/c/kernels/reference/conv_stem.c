/* The stem convolution: KxK, one group, an NCHW input with few channels (3 for RGB), any stride/dilation/padding.
 *
 * Why: with C = 3 a pixel holds 3 floats, so the channels-last implicit GEMM (conv_nhwc.c) needs a transposed
 * padded copy of the image and then one broadcast per pixel per tap, a load for every multiply-add. Here the
 * vectors run along output pixels of a row instead, and the weights are the broadcasts, each one meeting 24 pixels.
 *
 * Algorithm, per image:
 *  1. the input is split once into a zero-padded "phase image": for each channel c, padded row r and column phase
 *     p < sw, the padded columns p, p + sw, p + 2sw, ... one after the other (stride 2: even and odd columns apart,
 *     deinterleaved with AVX2 shuffles from the input rows); then the input of output pixel ox under tap
 *     (c, ky, kx) in output row oy
 *     sits at phase offset ox + (kx*dw)/sw of row oy*sh + ky*dh, phase (kx*dw) % sw: consecutive output pixels read
 *     consecutive floats, and a table holds each tap's offset;
 *  2. a tile is 4 output channels x 24 pixels of one output row (12 accumulators); per tap three 8-wide input
 *     loads meet four broadcast weights in 12 FMAs; taps in (c, ky, kx) order for every output;
 *  3. the epilogue: accumulators start from the bias, then Relu/Clip in registers, stored as rows (NCHW) or,
 *     transposed 4x8 in registers, as 4-channel pieces of pixels (NHWC); any other epilogue goes through a tile
 *     buffer and be_epi_apply.
 * Threads split the output rows; every output is the same sum in the same order whatever the thread count.
 */
#include "conv_stem.h"

/* no vector paths (conv_stem_loops.h runs the portable code) */
#define STEM_PHASES_VEC()

#include "conv_stem_common.h"

#define STEM_TILE_VEC()

#include "conv_stem_loops.h"
