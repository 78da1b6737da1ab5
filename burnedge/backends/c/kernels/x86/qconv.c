/* int8 convolution: im2col + int8 GEMM (any group, stride, dilation, padding); the depthwise kernel is
 * qconv_dw.c.
 *
 * GEMM path, per image and group, Y(Mg x OH*OW) = Wg(Mg x Cg*KH*KW) * cols(Cg*KH*KW x OH*OW):
 *  1. weights were packed at lowering time as int16-pair A panels, the zero-point term folded into the bias;
 *  2. output positions are cut into 16-wide column panels, a few per job; a job writes each panel's im2col rows
 *     (raw int8, padding = x_zp) into a plain K x 16 buffer, or reads the input rows directly for unit-stride
 *     unpadded 1x1 convs, then interleaves row pairs into the B-panel layout (qgemm.h);
 *  3. each 6-row weight panel meets each column panel in the micro-kernel, requantised in registers.
 * ARM: the same steps with NEON (zip interleaves, the vmlal tile, the exact NEON rule); with
 * dotprod the column panels are int8 quads and each 6-row weight panel is made into quads once per job
 * (`be_qa_quads`) for the sdot tile.
 */
#include "qconv.h"
#include "x86_qgemm.h"

/* im2col rows of output positions j0 .. j0+nr-1 (one image and group) as a plain K x 16 int8 block */
static void im2col_plain(const int8_t *x, const be_qconv_geo *g, int cg, long j0, int nr, int8_t pad, int8_t *dst) {
    const long hw = (long)g->H * g->W, k_all = (long)cg * g->KH * g->KW;
    if (nr < BE_QNR)
        for (long k = 0; k < k_all; k++) memset(dst + k * BE_QNR + nr, pad, BE_QNR - nr);
    int c = 0;
    while (c < nr) {
        const long j = j0 + c;
        const int oy = (int)(j / g->OW), ox = (int)(j % g->OW);
        const int len = nr - c < g->OW - ox ? nr - c : g->OW - ox;
        const int iy0 = oy * g->sh - g->ph, ix0 = ox * g->sw - g->pw;
        int8_t *d = dst + c;
        long k = 0;
        for (int ci = 0; ci < cg; ci++) {
            const int8_t *plane = x + ci * hw;
            for (int ky = 0; ky < g->KH; ky++) {
                const int iy = iy0 + ky * g->dh;
                if (iy < 0 || iy >= g->H) {
                    for (int kx = 0; kx < g->KW; kx++, k++) memset(d + k * BE_QNR, pad, (size_t)len);
                    continue;
                }
                const int8_t *row = plane + (long)iy * g->W;
                for (int kx = 0; kx < g->KW; kx++, k++) {
                    int8_t *dk = d + k * BE_QNR;
                    const int ix = ix0 + kx * g->dw, sw = g->sw;
                    int t0 = ix < 0 ? (-ix + sw - 1) / sw : 0, t1 = ix < g->W ? (g->W - 1 - ix) / sw + 1 : 0;
                    t1 = t1 < len ? t1 : len;
                    t0 = t0 < t1 ? t0 : t1;
                    if (t0) memset(dk, pad, (size_t)t0);
                    const int8_t *src = row + (ix + t0 * sw);
                    if (sw == 1)
                        memcpy(dk + t0, src, (size_t)(t1 - t0));
                    else
                        for (int t = t0; t < t1; t++) dk[t] = src[(t - t0) * sw];
                    if (len > t1) memset(dk + t1, pad, (size_t)(len - t1));
                }
            }
        }
        c += len;
    }
}

/* rows (2kp, 2kp+1) of a K x 16 block (row k at rows + k*ld) interleaved into a B panel */
#define PANEL_BYTES(K) (((K) + 1) / 2 * 32)
static void interleave(const int8_t *rows, long ld, long K, int8_t *dst) {
    const long k2 = (K + 1) / 2;
    for (long kp = 0; kp < k2; kp++) {
        const int8_t *r0 = rows + 2 * kp * ld;
        int8_t *d = dst + kp * 32;
        const __m128i v0 = _mm_loadu_si128((const __m128i *)r0);
        const __m128i v1 = 2 * kp + 1 < K ? _mm_loadu_si128((const __m128i *)(r0 + ld)) : _mm_setzero_si128();
        _mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi8(v0, v1));
        _mm_storeu_si128((__m128i *)(d + 16), _mm_unpackhi_epi8(v0, v1));
    }
}

void be_qconv2d_i8(const int8_t *x, const int16_t *wpack, int8_t *y, const be_qepi *e, const be_qconv_geo *g,
                   int32_t x_zp, int8_t *scratch, int threads) {
    const int cg = g->C / g->G, mg = g->M / g->G;
    const long K = (long)cg * g->KH * g->KW, k2 = (K + 1) / 2, hw = (long)g->H * g->W, ohw = (long)g->OH * g->OW;
    const int direct = g->KH == 1 && g->KW == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0 &&
                       g->OH == g->H && g->OW == g->W;
    const long np = (ohw + BE_QNR - 1) / BE_QNR, mp = (mg + BE_QMR - 1) / BE_QMR, nb = be_qconv_nb(K);
    const long nblk = (np + nb - 1) / nb, blocks = (long)g->N * g->G * nblk, ps = PANEL_BYTES(K);
    int nt = threads < BE_Q_MAX_THREADS ? threads : BE_Q_MAX_THREADS;
    if ((double)g->N * g->M * ohw * K < 200000.0) nt = 1;
    long mchunks = 1;
    if (nt > 1 && blocks < 2 * nt) mchunks = mp < nt ? mp : nt;
    const long jobs = blocks * mchunks;
    if (nt > jobs) nt = (int)jobs;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int t = 0; t < nt; t++) {
        int8_t *plain = scratch + (long)t * be_qconv_slice(K);
        int8_t *panels = plain + K * BE_QNR, *aq = panels + nb * ps;
        (void)aq;
        for (long job = t; job < jobs; job += nt) {
            const long mc = job % mchunks, rest = job / mchunks;
            const long blk = rest % nblk, ng = rest / nblk;
            const int n = (int)(ng / g->G), gi = (int)(ng % g->G);
            const long q0 = blk * nb, q1 = q0 + nb < np ? q0 + nb : np;
            const int8_t *xg = x + ((long)n * g->C + (long)gi * cg) * hw;
            for (long q = q0; q < q1; q++) {
                const long j0 = q * BE_QNR;
                const int nr = (int)(ohw - j0 < BE_QNR ? ohw - j0 : BE_QNR);
                int8_t *dst = panels + (q - q0) * ps;
                if (direct && nr == BE_QNR) {
                    interleave(xg + j0, hw, K, dst);
                } else if (direct) {
                    for (long k = 0; k < K; k++) {
                        memcpy(plain + k * BE_QNR, xg + k * hw + j0, (size_t)nr);
                        memset(plain + k * BE_QNR + nr, (int8_t)x_zp, BE_QNR - nr);
                    }
                    interleave(plain, BE_QNR, K, dst);
                } else {
                    im2col_plain(xg, g, cg, j0, nr, (int8_t)x_zp, plain);
                    interleave(plain, BE_QNR, K, dst);
                }
            }
            int8_t *yimg = y + (long)n * g->M * ohw;
            const int16_t *wg = wpack + (long)gi * mp * BE_QMR * k2 * 2;
            const long p0 = mp * mc / mchunks, p1 = mp * (mc + 1) / mchunks;
            for (long p = p0; p < p1; p++) {
                const long i0 = (long)gi * mg + p * BE_QMR;
                const int mr = (int)(mg - p * BE_QMR < BE_QMR ? mg - p * BE_QMR : BE_QMR);
                const int16_t *wp = wg + p * BE_QMR * k2 * 2;
                for (long q = q0; q < q1; q++) {
                    const long j0 = q * BE_QNR;
                    const int nr = (int)(ohw - j0 < BE_QNR ? ohw - j0 : BE_QNR);
                    be_qgemm_tile(k2, wp, panels + (q - q0) * ps, mr, nr, yimg + i0 * ohw + j0, ohw, e, i0, j0);
                }
            }
        }
    }
}
