/* Depthwise convolution (one input channel per group, any kernel size, stride, dilation, padding, multiplier).
 *
 * Algorithm, per (image, output channel) job:
 *  1. copy the input plane into the thread's scratch, zero-padded and split by column phase (column ix of the
 *     padded row goes to phase ix % sw at ix / sw), so that for every kernel column kx the inputs of consecutive
 *     outputs ox are consecutive floats: phase (kx*dw) % sw, offset (kx*dw) / sw + ox; the padding is zeroed once
 *     per call, as every plane puts its input in the same cells;
 *  2. outputs go in slots of 8 consecutive columns of a row, four slots at a time (across rows when rows are
 *     short): one accumulator vector per slot, one FMA per kernel tap with the tap's weight broadcast, no bounds
 *     checks (the padding and the slack are zeros);
 *  3. the epilogue (bias, residual, activation) is applied to the accumulators and the row stored.
 * Jobs are spread statically over threads; the padded plane is reused while the input channel stays the same.
 */
#include "conv.h"

/* no vector paths (conv_dw_loops.h runs the portable code) */
#define DW_PLANE_VEC()

#include "conv_dw_loops.h"
