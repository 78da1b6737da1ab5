/* int8 convolution with channels-last (NHWC) rows: an implicit GEMM for one group, reading an NCHW or NHWC input
 * and writing an NCHW or NHWC output (flags: 1 = input NHWC, 2 = output NHWC; lower/quantized.py decides which
 * tensors live channels-last); the depthwise twin is qconv_dw_nhwc.c.
 *
 * Why: on the small planes of edge CNNs (25x5, 12x12, 6x6) output positions fill 16-wide column panels badly; with
 * rows = output pixels and columns = channels every panel is full and 1x1 convs read NHWC activations in place.
 *
 * be_qconv_nhwc_i8: Y(pixels x M) = im2col(X)(pixels x KH*KW*C) * W(KH*KW*C x M), k ordered (ky, kx, c):
 *  1. per band of output rows (be_qconv_nhwc_band: a copy of about 64 KiB), the input rows it reads are copied
 *     into a channels-last block padded with x_zp (the lowering folds -x_zp * sum(w) into the bias), so that a tap
 *     row of an output pixel is one run of KW*C bytes (dilation 1);
 *     NCHW inputs of 1-4 channels (stems) are interleaved with a constant stride, so the stores vectorise;
 *     a unit-stride unpadded 1x1 conv on an NHWC input skips the copy and uses the input rows in place;
 *  2. a band's output pixels go 6 at a time (a row panel; panels are split over threads in contiguous ranges), their
 *     im2col rows gathered from the padded block into a thread buffer (runs of <= 64 bytes in 8-byte moves);
 *     the packing may read whole 16-byte blocks past a row's K (junk there meets only zero weight padding);
 *  3. `be_qgemm_panel` packs the rows and runs the int8 micro-kernel over all weight column panels (B panels
 *     packed at lowering time), requantising per column in registers; an NCHW output goes through a 6 x M tile
 *     stored transposed.
 * Integer results do not depend on the thread count.
 */
#include "qconv.h"
#include "qconv_nhwc_loops.h"
