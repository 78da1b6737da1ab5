/* Winograd F(2x2, 3x3) convolution, channels last: 3x3 kernels, stride 1, no dilation, one group, C % 8 == 0.
 *
 * Why: a 2x2 block of outputs of a 3x3 conv takes 36 multiply-adds per (in, out) channel pair done directly and 16
 * through the Winograd transform, so the GEMM part shrinks 2.25 times for the price of cheap transforms.
 *
 * With B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1] and
 * A^T = [1 1 1 0; 0 1 -1 -1], a 2x2 output block is Y = A^T [sum_c (G g G^T) . (B^T d B)] A, d its 4x4 input patch.
 * Algorithm, per call:
 *  1. the lowering packed U_xi = (G g G^T)[xi] (C x M per xi = 0..15) as B panels;
 *  2. the input is copied once into a zero-padded NHWC image that covers every 4x4 patch (an NCHW input is
 *     transposed on the way);
 *  3. output blocks (ceil(OH/2) x ceil(OW/2) per image) go in panels of MR = 6, a panel per job; the job transforms
 *     its 6 patches, 8 channels at a time, into V_xi (16 matrices of 6 x C in its thread slice);
 *  4. for each 16-wide panel of output channels, 16 GEMM tiles M_xi = V_xi U_xi (6x16 micro-kernel, sums over c in
 *     order), then the output transform of each block and the epilogue (bias, residual, activation) through
 *     be_epi8_store; outputs past OH or OW are dropped.
 *  Shared mode (conv.h be_conv_wino_shared: the 16 U_xi past 1 MB, the batch's V within 1 MB): step 3 for every
 *  panel first, into one V the threads share, then a job per (pair of column panels, row panel), row panels
 *  fastest, so a thread's run of jobs reads one pair's weights once instead of once per six patches.
 * Every output is the same sum in the same order whatever the thread count. NEON: the same steps on 4-float
 * vectors (conv_tile.h tile_neon). AVX-512: the products on zmm (x86/conv_wino.c).
 */
#include "conv.h"
#include "conv_tile.h"

/* no vector paths (conv_wino_loops.h runs the portable code) */
#define WINO_IN_VEC()
#define WINO_OUT_VEC()
#define WINO_LOCALS()
#define WINO_PANEL_VEC()
#define WINO_PRODUCT_VEC()

#include "conv_wino_loops.h"
