/* Channels-last (NHWC) convolution as an implicit GEMM: rows = output pixels, columns = output channels.
 *
 * Why: on small planes (7x7 .. 32x32) an NCHW conv has few output positions per row of the product and many
 * partial 16-wide column panels; in NHWC every pixel is a row of C contiguous floats, the out channels fill the
 * 16-wide panels of the weights, and with the input zero-padded once no im2col is needed at all.
 *
 * Algorithm, per call (one group; the weights are (KH*KW*C) x M, k ordered (ky, kx, c), in B panels):
 *  1. unless the input is NHWC and needs no padding, it is copied once into scratch as a zero-padded NHWC image
 *     (Hp x Wp x C per image; an NCHW input is transposed on the way); then input k of output pixel (oy, ox)
 *     sits at base(oy, ox) + koff[k], with base = ((oy*sh)*Wp + ox*sw)*C and koff[k] = (ky*dh*Wp + kx*dw)*C + c
 *     (a table of K offsets made once per call);
 *  2. output pixels are cut into row panels of MR = 6 (8 when M <= 8: an 8x8 tile instead of a half-empty 6x16
 *     one); a job is one row panel and a range of column panels (all of them unless threads need more jobs), or,
 *     on small planes, one column panel, the jobs going panel by panel (a weight panel meets every row panel
 *     while in cache);
 *  3. the micro-kernel (conv_tile.h: AVX2, NEON or portable) runs the full K loop: per k the weight vectors and
 *     one broadcast per pixel from its base + koff[k]; a full panel on one output row addresses its pixels from
 *     one base and a stride, a 1x1 conv read in place needs no koff at all; every output is one dot product in k
 *     order, whatever the thread count (1x1 convs read in place and written NHWC go through run_lin, a lean
 *     out-of-line job loop);
 *  4. the epilogue is applied in registers: the accumulators start from the bias, then the NHWC residual and the
 *     common activations resolved at compile time, anything else through be_epi8_store; an NCHW output goes
 *     through a small buffer, stored transposed.
 * No parallel region is entered with one thread (an inactive one still costs a few hundred ns per call).
 */
#include "conv.h"
#include "conv_tile.h"

/* row iy of an NCHW image as NHWC pixels: d[ix*C + c] = s[c*hw + ix] */
static void transpose_row(const float *s, long hw, long C, long W, float *d) {
    for (long x0 = 0; x0 < W; x0 += 16) { /* 16 pixels at a time, the channels scattered into them */
        const long x1 = x0 + 16 < W ? x0 + 16 : W;
        for (long c = 0; c < C; c++)
            for (long ix = x0; ix < x1; ix++) d[ix * C + c] = s[c * hw + ix];
    }
}

/* one tile of run_jobs (conv_nhwc_jobs.h; its locals): the micro-kernel for the panel's shape and activation */
#define NHWC_TILE()                                                                                                    \
    do {                                                                                                               \
        tile_portable(q->K, koff, base, mr, b, nr, c, ldc, &ep, i0, jc);                                               \
    } while (0)

#include "conv_nhwc_jobs.h"

static void run_act(const conv_job *q, const be_conv_geo *g, const be_epi *e, int t, long j0, long j1, int act,
                    const int LIN) {
    switch (act) {
    case -2: run_jobs(q, g, e, t, j0, j1, -2, 0); break;
    default: run_jobs(q, g, e, t, j0, j1, -1, LIN); break;
    }
}

static
void run_any(const conv_job *q, const be_conv_geo *g, const be_epi *e, int t, long j0, long j1, int act) {
    const int lin = g->KH == 1 && g->KW == 1 && q->hp == g->OH && q->wp == g->OW && g->sh == 1 && g->sw == 1;
    if (lin)
        run_act(q, g, e, t, j0, j1, act, 1);
    else
        run_act(q, g, e, t, j0, j1, act, 0);
}

#include "conv_nhwc_loops.h"
