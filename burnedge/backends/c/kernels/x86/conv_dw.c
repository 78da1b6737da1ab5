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
#include "x86_dense.h"

/* the portable plane (conv_dw_loops.h), for the shapes the vector path leaves */
static void plane_portable(const float *P, long rl, const float *wk, float *yp, const be_epi *e, long m,
                           const be_conv_geo *g);

/* outputs in slots of 8 consecutive columns of one row; four slots (across rows when rows are short) at once.
 * Inlined with a constant tap count for the common kernels, so the tap loop unrolls with weights in registers. */
static inline __attribute__((always_inline)) void slots_avx2(const float *P, long rstride, const long *offs,
                                                             const float *wk, float *yp, const be_epi *e, long m,
                                                             const be_conv_geo *g, const int taps) {
    __m256 wv[taps];
    for (int t = 0; t < taps; t++) wv[t] = _mm256_broadcast_ss(wk + t);
    const long ow = g->OW, total = (long)g->OH * ((ow + 7) / 8);
    long oy = 0, ox = 0;
    for (long s0 = 0; s0 < total; s0 += 4) {
        const float *src[4];
        long j[4];
        int n[4];
        for (int u = 0; u < 4; u++) {
            src[u] = P + oy * g->sh * rstride + ox;
            j[u] = oy * ow + ox;
            n[u] = s0 + u < total ? (ow - ox < 8 ? (int)(ow - ox) : 8) : 0;
            if (s0 + u + 1 < total) {
                ox += 8;
                if (ox >= ow) ox = 0, oy++;
            }
        }
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (int t = 0; t < taps; t++) {
            const long o = offs[t];
            a0 = _mm256_fmadd_ps(wv[t], _mm256_loadu_ps(src[0] + o), a0);
            a1 = _mm256_fmadd_ps(wv[t], _mm256_loadu_ps(src[1] + o), a1);
            a2 = _mm256_fmadd_ps(wv[t], _mm256_loadu_ps(src[2] + o), a2);
            a3 = _mm256_fmadd_ps(wv[t], _mm256_loadu_ps(src[3] + o), a3);
        }
        if (n[0]) be_epi8_store(yp + j[0], a0, e, m, j[0], n[0]);
        if (n[1]) be_epi8_store(yp + j[1], a1, e, m, j[1], n[1]);
        if (n[2]) be_epi8_store(yp + j[2], a2, e, m, j[2], n[2]);
        if (n[3]) be_epi8_store(yp + j[3], a3, e, m, j[3], n[3]);
    }
}

static void plane_avx2(const float *P, long rl, const float *wk, float *yp, const be_epi *e, long m,
                       const be_conv_geo *g) {
    const long rstride = (long)g->sw * rl;
    const int kw = g->KW, kh = g->KH, taps = kh * kw;
    if (taps > 49) {
        plane_portable(P, rl, wk, yp, e, m, g);
        return;
    }
    long offs[49];
    for (int ky = 0; ky < kh; ky++)
        for (int kx = 0; kx < kw; kx++) {
            const int o = kx * g->dw;
            offs[ky * kw + kx] = (long)ky * g->dh * rstride + (o % g->sw) * rl + o / g->sw;
        }
    if (taps == 9)
        slots_avx2(P, rstride, offs, wk, yp, e, m, g, 9);
    else if (taps == 25)
        slots_avx2(P, rstride, offs, wk, yp, e, m, g, 25);
    else
        slots_avx2(P, rstride, offs, wk, yp, e, m, g, taps);
}

/* one plane with the set's vector path (continue), else the portable one */
#define DW_PLANE_VEC()                                                                                                 \
    if (!portable) {                                                                                                   \
        plane_avx2(P, rl, w + m * kk, yp, &ep, m, g);                                                                  \
        continue;                                                                                                      \
    }

#include "conv_dw_loops.h"
