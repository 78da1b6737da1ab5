/* Channels-last (NHWC) depthwise convolution, multiplier 1: vectorised over channels, any kernel, stride,
 * dilation and padding.
 *
 * Why: the width-vectorised NCHW kernel (conv_dw.c) wastes most of its 8-wide slots on small planes (25x5, 7x7)
 * and pays a padded plane copy per channel; in NHWC the C channels of a pixel are contiguous, so every vector is
 * full whatever the plane size.
 *
 * Algorithm, per image, in bands of output rows (a job is one band; bands are spread over threads):
 *  1. the input rows the band reads are copied into the thread's scratch as a zero-padded NHWC block
 *     (Wp = W + both pads columns; rows outside the image and pad columns are zeros), from an NHWC or an NCHW
 *     input alike; every tap of every output pixel then sits at a fixed offset from the pixel's base, so the
 *     inner loops have no bounds checks;
 *  2. channels go 8 at a time (a masked store for the last C % 8); 3x3 stride-1 kernels keep the 9 tap weights
 *     in registers and take 4 pixels of a row at a time, each input column loaded once for the 3 pixels that read
 *     it; other kernels take blocks of BP = 4 output pixels of the band (flattened over its rows), each tap's
 *     weights (in registers for 9 taps) meeting the 4 pixels; taps in order for every pixel;
 *  3. the epilogue (bias, NHWC residual, activation) is applied in registers with the common activations
 *     resolved at compile time (other epilogues go through be_epi8_store); with an NCHW output the block is
 *     stored transposed.
 * x86, NHWC input with C % 8 == 0, strided convs on large planes and 3x3 stride-1 ones whose band would be at
 * most 2 output rows: no band copy at all, the input read in place (band_direct in x86/conv_dw_nhwc.c).
 * Every output is the same sum in the same order whatever the thread count and band split. NEON: the same loops
 * on 4-float vectors, 8 channels at a time on aarch64 and 4 on armv7 (16 q registers).
 */
#include "conv.h"

#include "conv_dw_nhwc_common.h"

/* no vector paths (conv_dw_nhwc_loops.h runs the portable code) */
#define DWC_DIRECT_VEC()
#define DWC_BAND_VEC()

#include "conv_dw_nhwc_loops.h"
