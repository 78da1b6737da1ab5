/* Convolution as GEMM (any group, stride, dilation, padding) and transposed convolution (GEMM + col2im).
 *
 * Conv, per image and group, is Y(Mg x OH*OW) = Wg(Mg x Cg*KH*KW) * cols(Cg*KH*KW x OH*OW):
 *  1. the weights were packed at compile time into A panels (gemm.h), or are read as they are (Mg rows of K
 *     floats, ONNX's layout) when they arrive at run time;
 *  2. output positions are cut into 16-wide column panels, a few panels per job when K is small (they stay in
 *     L1 while every weight panel meets them); a job builds its panels of cols straight in the packed layout
 *     (im2col of 16 positions: runs of positions on one output row copy contiguous or strided input, the range
 *     that falls in the padding computed once per run and zeroed), or reads the input directly for 1x1 convs
 *     with unit stride and no padding;
 *  3. the 6x16 micro-kernel computes each tile over the full K and applies the epilogue in registers.
 * ConvTranspose, per image and group: cols(Mg*KH*KW x H*W) = Wg^T * Xg (one GEMM), then every output channel is
 * its bias plus the cols scattered at (iy*sh + ky*dh - ph, ix*sw + kx*dw - pw), kernel positions in order.
 */
#include "conv.h"
#include "isa.h" /* BE_PAR_MIN_MACS */
#include "workers.h"

/* im2col of output positions j0 .. j0+nr-1 of one image and group, as one NR-wide B panel */
static void im2col_panel(const float *x, const be_conv_geo *g, int cg, long j0, int nr, float *dst) {
    const long hw = (long)g->H * g->W, kk = (long)g->KH * g->KW, k_all = cg * kk;
    int c = 0;
    while (c < nr) {
        const long j = j0 + c;
        const int oy = (int)(j / g->OW), ox = (int)(j % g->OW);
        const int len = nr - c < g->OW - ox ? nr - c : g->OW - ox;
        const int iy0 = oy * g->sh - g->ph, ix0 = ox * g->sw - g->pw;
        float *d = dst + c;
        long k = 0;
        for (int ci = 0; ci < cg; ci++) {
            const float *plane = x + ci * hw;
            for (int ky = 0; ky < g->KH; ky++) {
                const int iy = iy0 + ky * g->dh;
                if (iy < 0 || iy >= g->H) {
                    for (int kx = 0; kx < g->KW; kx++, k++)
                        for (int t = 0; t < len; t++) d[k * BE_NR + t] = 0.0f;
                    continue;
                }
                const float *row = plane + (long)iy * g->W;
                for (int kx = 0; kx < g->KW; kx++, k++) {
                    float *dk = d + k * BE_NR;
                    const int ix = ix0 + kx * g->dw, sw = g->sw;
                    /* outputs t0 <= t < t1 read inside the row, the others are padding */
                    int t0 = ix < 0 ? (-ix + sw - 1) / sw : 0, t1 = ix < g->W ? (g->W - 1 - ix) / sw + 1 : 0;
                    t1 = t1 < len ? t1 : len;
                    t0 = t0 < t1 ? t0 : t1;
                    for (int t = 0; t < t0; t++) dk[t] = 0.0f;
                    if (t1 > t0) {
                        const float *src = row + (ix + t0 * sw);
                        if (sw == 1 && t1 - t0 == BE_NR)
                            memcpy(dk, src, BE_NR * sizeof(float));
                        else if (sw == 1)
                            for (int t = t0; t < t1; t++) dk[t] = src[t - t0];
                        else
                            for (int t = t0; t < t1; t++) dk[t] = src[(t - t0) * sw];
                    }
                    for (int t = t1; t < len; t++) dk[t] = 0.0f;
                }
            }
        }
        c += len;
    }
    if (nr < BE_NR)
        for (long k = 0; k < k_all; k++)
            for (int t = nr; t < BE_NR; t++) dst[k * BE_NR + t] = 0.0f;
}

typedef struct {
    const float *x, *wpack;
    float *y, *scratch;
    const be_epi *e;
    const be_conv_geo *g;
    long K, hw, ohw, np, mp, nb, nblk, mchunks;
    int packed, direct;
} conv2d_call;

/* jobs [lo, hi) of be_conv2d_f32 on thread t (its scratch slice) */
static void conv2d_jobs(void *ctx, int t, long lo, long hi) {
    const conv2d_call *c = ctx;
    const be_conv_geo *g = c->g;
    const int cg = g->C / g->G, mg = g->M / g->G, packed = c->packed, direct = c->direct;
    const long K = c->K, hw = c->hw, ohw = c->ohw, np = c->np, mp = c->mp, nb = c->nb, nblk = c->nblk;
    const long mchunks = c->mchunks;
    float *slice = c->scratch + (long)t * be_gemm_slice(K);
    for (long job = lo; job < hi; job++) {
        const long mc = job % mchunks, rest = job / mchunks;
        const long blk = rest % nblk, ng = rest / nblk;
        const int n = (int)(ng / g->G), gi = (int)(ng % g->G);
        const long q0 = blk * nb, q1 = q0 + nb < np ? q0 + nb : np;
        const float *xg = c->x + ((long)n * g->C + (long)gi * cg) * hw;
        const float *bp[16];
        long ldb[16];
        for (long q = q0; q < q1; q++) {
            const long j0 = q * BE_NR;
            const int nr = (int)(ohw - j0 < BE_NR ? ohw - j0 : BE_NR);
            float *dst = slice + (q - q0) * K * BE_NR;
            bp[q - q0] = dst;
            ldb[q - q0] = BE_NR;
            if (direct && nr == BE_NR) {
                bp[q - q0] = xg + j0;
                ldb[q - q0] = hw;
            } else if (direct) {
                be_gemm_pack_b(K, xg, hw, 1, j0, nr, dst);
            } else {
                im2col_panel(xg, g, cg, j0, nr, dst);
            }
        }
        be_epi ep = *c->e;
        if (ep.add1) ep.add1 += (long)n * g->M * ohw;
        float *yimg = c->y + (long)n * g->M * ohw;
        const float *wg = c->wpack + (long)gi * (packed ? mp * BE_MR : mg) * K;
        const long rsa = packed ? 1 : K, csa = packed ? BE_MR : 1; /* A(r, k) of one panel of rows */
        const long p0 = mp * mc / mchunks, p1 = mp * (mc + 1) / mchunks;
        for (long p = p0; p < p1; p++) {
            const long i0 = (long)gi * mg + p * BE_MR;
            const int mr = (int)(mg - p * BE_MR < BE_MR ? mg - p * BE_MR : BE_MR);
            for (long q = q0; q < q1; q++) {
                const long j0 = q * BE_NR;
                const int nr = (int)(ohw - j0 < BE_NR ? ohw - j0 : BE_NR);
                be_gemm_tile(K, wg + p * BE_MR * K, rsa, csa, mr, bp[q - q0], ldb[q - q0], nr, yimg + i0 * ohw + j0,
                             ohw, &ep, i0, j0);
            }
        }
    }
}

void be_conv2d_f32(const float *x, const float *wpack, int packed, float *y, const be_epi *e, const be_conv_geo *g,
                   float *scratch, int threads) {
    conv2d_call c = {.x = x, .wpack = wpack, .y = y, .scratch = scratch, .e = e, .g = g, .packed = packed};
    const int cg = g->C / g->G, mg = g->M / g->G;
    c.K = (long)cg * g->KH * g->KW, c.hw = (long)g->H * g->W, c.ohw = (long)g->OH * g->OW;
    c.direct = g->KH == 1 && g->KW == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0 && g->OH == g->H &&
               g->OW == g->W;
    c.np = (c.ohw + BE_NR - 1) / BE_NR, c.mp = (mg + BE_MR - 1) / BE_MR, c.nb = be_gemm_nb(c.K);
    c.nblk = (c.np + c.nb - 1) / c.nb;
    const long blocks = (long)g->N * g->G * c.nblk;
    int nt = threads < BE_DENSE_MAX_THREADS ? threads : BE_DENSE_MAX_THREADS;
    if ((double)g->N * g->M * c.ohw * c.K < BE_PAR_MIN_MACS) nt = 1;
    c.mchunks = 1;
    if (nt > 1 && blocks < 2 * nt) c.mchunks = c.mp < nt ? c.mp : nt;
    be_parallel(nt, blocks * c.mchunks, conv2d_jobs, &c);
}

typedef struct {
    const float *cols, *bias;
    float *y;
    const be_conv_geo *g;
    int n, gi;
} convt_call;

/* output channels [lo, hi) of one (image, group): col2im of the gemm's columns, the bias first */
static void convt_channels(void *ctx, int t, long lo, long hi) {
    (void)t;
    const convt_call *c = ctx;
    const be_conv_geo *g = c->g;
    const int mg = g->M / g->G;
    const long kk = (long)g->KH * g->KW, hw = (long)g->H * g->W, ohw = (long)g->OH * g->OW;
    for (long m = lo; m < hi; m++) {
        const long oc = (long)c->gi * mg + m;
        float *yp = c->y + ((long)c->n * g->M + oc) * ohw;
        const float b = c->bias ? c->bias[oc] : 0.0f;
        for (long i = 0; i < ohw; i++) yp[i] = b;
        for (int ky = 0; ky < g->KH; ky++)
            for (int kx = 0; kx < g->KW; kx++) {
                const float *cp = c->cols + (m * kk + (long)ky * g->KW + kx) * hw;
                for (int iy = 0; iy < g->H; iy++) {
                    const int oy = iy * g->sh + ky * g->dh - g->ph;
                    if (oy < 0 || oy >= g->OH) continue;
                    for (int ix = 0; ix < g->W; ix++) {
                        const int ox = ix * g->sw + kx * g->dw - g->pw;
                        if (ox >= 0 && ox < g->OW) yp[(long)oy * g->OW + ox] += cp[(long)iy * g->W + ix];
                    }
                }
            }
    }
}

void be_convt2d_f32(const float *x, const float *wpack, int packed, const float *bias, float *y,
                    const be_conv_geo *g, float *scratch, int threads) {
    const int cg = g->C / g->G, mg = g->M / g->G;
    const long kk = (long)g->KH * g->KW, hw = (long)g->H * g->W, ohw = (long)g->OH * g->OW;
    const long rows = mg * kk, mp = (rows + BE_MR - 1) / BE_MR;
    float *cols = scratch, *gs = scratch + rows * hw;
    const be_epi none = {1.0f, 1.0f, 0, 0, 0, 0, 0, 0, BE_ACT_NONE, 0.0f, 0.0f};
    const int nt = threads < BE_DENSE_MAX_THREADS ? threads : BE_DENSE_MAX_THREADS;
    for (int n = 0; n < g->N; n++) {
        for (int gi = 0; gi < g->G; gi++) {
            const float *xg = x + ((long)n * g->C + (long)gi * cg) * hw;
            if (packed)
                be_gemm_f32(rows, hw, cg, wpack + (long)gi * mp * BE_MR * cg, 0, 0, 1, xg, hw, 1, 0, cols, hw, &none,
                            gs, threads);
            else /* ONNX's (C, Mg, KH, KW): A(row, k) = w[(gi*cg + k)*rows + row] */
                be_gemm_f32(rows, hw, cg, wpack + (long)gi * cg * rows, 1, rows, 0, xg, hw, 1, 0, cols, hw, &none, gs,
                            threads);
            convt_call c = {cols, bias, y, g, n, gi};
            be_parallel(mg * ohw > 4096 ? nt : 1, mg, convt_channels, &c);
        }
    }
}
