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
#include "x86_conv_tile.h"
#ifdef BE_ISA_X86_AVX512F
#include "x86_zmm_conv.h" /* 8-pixel row panels, 8x32 and 8x16 zmm tiles */
#define NHWC_ROWS 8
#define NHWC_PANELS 2
#endif

/* row iy of an NCHW image as NHWC pixels: d[ix*C + c] = s[c*hw + ix] */
static void transpose_row(const float *s, long hw, long C, long W, float *d) {
    if (C == 3) { /* RGB: 8 pixels of the three planes interleaved with permutes and blends */
        const __m256i r0 = _mm256_setr_epi32(0, 0, 0, 1, 0, 0, 2, 0), g0 = _mm256_setr_epi32(0, 0, 0, 0, 1, 0, 0, 2);
        const __m256i b0 = _mm256_setr_epi32(0, 0, 0, 0, 0, 1, 0, 0), r1 = _mm256_setr_epi32(0, 3, 0, 0, 4, 0, 0, 5);
        const __m256i g1 = _mm256_setr_epi32(0, 0, 3, 0, 0, 4, 0, 0), b1 = _mm256_setr_epi32(2, 0, 0, 3, 0, 0, 4, 0);
        const __m256i r2 = _mm256_setr_epi32(0, 0, 6, 0, 0, 7, 0, 0), g2 = _mm256_setr_epi32(5, 0, 0, 6, 0, 0, 7, 0);
        const __m256i b2 = _mm256_setr_epi32(0, 5, 0, 0, 6, 0, 0, 7);
        long ix = 0;
        for (; ix + 8 <= W; ix += 8) {
            const __m256 r = _mm256_loadu_ps(s + ix), g = _mm256_loadu_ps(s + hw + ix);
            const __m256 b = _mm256_loadu_ps(s + 2 * hw + ix);
            float *o = d + ix * 3;
            _mm256_storeu_ps(o, _mm256_blend_ps(_mm256_blend_ps(_mm256_permutevar8x32_ps(r, r0),
                                                                _mm256_permutevar8x32_ps(g, g0), 0x92),
                                                _mm256_permutevar8x32_ps(b, b0), 0x24));
            _mm256_storeu_ps(o + 8, _mm256_blend_ps(_mm256_blend_ps(_mm256_permutevar8x32_ps(r, r1),
                                                                    _mm256_permutevar8x32_ps(g, g1), 0x24),
                                                    _mm256_permutevar8x32_ps(b, b1), 0x49));
            _mm256_storeu_ps(o + 16, _mm256_blend_ps(_mm256_blend_ps(_mm256_permutevar8x32_ps(r, r2),
                                                                     _mm256_permutevar8x32_ps(g, g2), 0x49),
                                                     _mm256_permutevar8x32_ps(b, b2), 0x92));
        }
        for (; ix < W; ix++) d[ix * 3] = s[ix], d[ix * 3 + 1] = s[hw + ix], d[ix * 3 + 2] = s[2 * hw + ix];
        return;
    }
    for (long x0 = 0; x0 < W; x0 += 16) { /* 16 pixels at a time, the channels scattered into them */
        const long x1 = x0 + 16 < W ? x0 + 16 : W;
        for (long c = 0; c < C; c++)
            for (long ix = x0; ix < x1; ix++) d[ix * C + c] = s[c * hw + ix];
    }
}

#ifdef BE_ISA_X86_AVX512F
/* one tile of run_jobs (conv_nhwc_jobs.h; its locals), AVX-512: with more than 8 out channels two column panels
 * at a time (8x32), the odd one alone (8x16); a last panel of at most 4 (2) pixels computes 4 (2) rows */
#define NHWC_TILE()                                                                                                    \
    do {                                                                                                               \
        if (act == -2) {                                                                                               \
            tile_portable(q->K, koff, base, mr, b, nr, c, ldc, &ep, i0, jc);                                           \
        } else if (q->M <= 8) {                                                                                        \
            if (full)                                                                                                  \
                tile8_avx2(q->K, koff, base, mr, b, nr, c, ldc, &ep, i0, jc, act, st, LIN ? 2 : 1);                    \
            else                                                                                                       \
                tile8_avx2(q->K, koff, base, mr, b, nr, c, ldc, &ep, i0, jc, act, st, 0);                              \
        } else {                                                                                                       \
            const int two = qq + 1 < qb;                                                                               \
            const int nr2 = two ? (int)(q->M - jc < 2 * BE_NR ? q->M - jc : 2 * BE_NR) : nr;                          \
            const int shape = full ? (LIN ? 3 : 2) : ZT_SHAPE0(mr);                                                  \
            if (two && !q->out_nhwc) { /* NCHW: through a 8x32 buffer; the first panel on to tbuf, as one tile's */   \
                float t2[8 * 2 * BE_NR];                                                                               \
                zmm_tile(q->K, koff, base, mr, b, b + BE_NR * q->K, nr2, t2, 2 * BE_NR, &ep, i0, jc, st, act, shape,   \
                         2);                                                                                           \
                for (int r = 0; r < mr; r++)                                                                           \
                    for (int j = 0; j < BE_NR; j++) tbuf[r * BE_NR + j] = t2[r * 2 * BE_NR + j];                       \
                for (int j = BE_NR; j < nr2; j++)                                                                      \
                    for (int r = 0; r < mr; r++) yi[(jc + j) * q->ohw + i0 + r] = t2[r * 2 * BE_NR + j];               \
            } else {                                                                                                   \
                zmm_tile(q->K, koff, base, mr, b, b + BE_NR * q->K, nr2, c, ldc, &ep, i0, jc, st, act, shape,          \
                         1 + two);                                                                                     \
            }                                                                                                          \
            qq += two;                                                                                                 \
        }                                                                                                              \
    } while (0)

#else
/* one tile of run_jobs (conv_nhwc_jobs.h; its locals): the micro-kernel for the panel's shape and activation */
#define NHWC_TILE()                                                                                                    \
    do {                                                                                                               \
        if (act != -2 && R == 8 && full)                                                                               \
            tile8_avx2(q->K, koff, base, mr, b, nr, c, ldc, &ep, i0, jc, act, st, LIN ? 2 : 1);                        \
        else if (act != -2 && R == 8)                                                                                  \
            tile8_avx2(q->K, koff, base, mr, b, nr, c, ldc, &ep, i0, jc, act, st, 0);                                  \
        else if (act != -2 && full)                                                                                    \
            tile_avx2(q->K, koff, base, mr, b, nr, c, ldc, &ep, i0, jc, act, st, LIN ? 2 : 1, 6);                      \
        else if (act != -2 && mr <= 3)                                                                                 \
            tile_avx2(q->K, koff, base, mr, b, nr, c, ldc, &ep, i0, jc, act, st, 0, 3);                                \
        else if (act != -2)                                                                                            \
            tile_avx2(q->K, koff, base, mr, b, nr, c, ldc, &ep, i0, jc, act, st, 0, 6);                                \
        else                                                                                                           \
            tile_portable(q->K, koff, base, mr, b, nr, c, ldc, &ep, i0, jc);                                           \
    } while (0)

#endif

#include "conv_nhwc_jobs.h"

#ifdef BE_ISA_X86_AVX512F
/* one tile of a 1x1 conv read in place: rows i0.. (mr of them) at a (pixel i0 + r at a + r*C), column panel qq and,
 * AVX-512, the next one too when it is in [.., qb): returns the panels done */
static inline __attribute__((always_inline)) int lin_tile(const conv_job *q, const be_epi *ep, long C, const float *a,
                                                          float *y, long i0, int mr, long qq, long qb, const int act) {
    const long K = q->K, M = q->M, jc = qq * BE_NR;
    const int nr = (int)(M - jc < BE_NR ? M - jc : BE_NR);
    const float *b = q->wpack + qq * BE_NR * K;
    const float *base[8] = {a, a, a, a, a, a, a, a}; /* MODE 2 reads base[0] only */
    if (mr < 8)
        for (int r = 1; r < mr; r++) base[r] = a + r * C; /* rows past mr: row 0 again, not stored */
    if (M <= 8) {
        tile8_avx2(K, q->koff, base, mr, b, nr, y + jc, M, ep, i0, jc, act, C, mr == 8 ? 2 : 0);
        return 1;
    }
    const int two = qq + 1 < qb, nr2 = two ? (int)(M - jc < 2 * BE_NR ? M - jc : 2 * BE_NR) : nr;
    zmm_tile(K, q->koff, base, mr, b, b + BE_NR * K, nr2, y + jc, M, ep, i0, jc, C, act, mr == 8 ? 3 : ZT_SHAPE0(mr),
             1 + two);
    return 1 + two;
}

#else
/* one tile of a 1x1 conv read in place: rows i0.. (mr of them) at a (pixel i0 + r at a + r*C), column panel qq */
static inline __attribute__((always_inline)) int lin_tile(const conv_job *q, const be_epi *ep, long C, const float *a,
                                                          float *y, long i0, int mr, long qq, long qb, const int act) {
    (void)qb;
    const int R = q->rows;
    const long K = q->K, M = q->M, jc = qq * BE_NR;
    const int nr = (int)(M - jc < BE_NR ? M - jc : BE_NR);
    const float *b = q->wpack + qq * BE_NR * K;
    const float *base[8] = {a, a, a, a, a, a, a, a}; /* MODE 2 reads base[0] only */
    if (mr < R)
        for (int r = 1; r < mr; r++) base[r] = a + r * C; /* rows past mr: row 0 again, not stored */
    if (R == 8 && mr == 8)
        tile8_avx2(K, q->koff, base, mr, b, nr, y + jc, M, ep, i0, jc, act, C, 2);
    else if (R == 8)
        tile8_avx2(K, q->koff, base, mr, b, nr, y + jc, M, ep, i0, jc, act, C, 0);
    else if (mr == R)
        tile_avx2(K, q->koff, base, mr, b, nr, y + jc, M, ep, i0, jc, act, C, 2, 6);
    else if (mr <= 3)
        tile_avx2(K, q->koff, base, mr, b, nr, y + jc, M, ep, i0, jc, act, C, 0, 3);
    else
        tile_avx2(K, q->koff, base, mr, b, nr, y + jc, M, ep, i0, jc, act, C, 0, 6);
    return 1;
}

#endif

/* A 1x1 conv read in place with an NHWC output (the pointwise convs of MobileNets): pixel i is row x + i*C of a
 * plain GEMM, so a job is a pointer step. Kept out of line with few live values, so that the compiler holds them
 * in registers: with small K the generic loop's per-job bookkeeping cost as much as the tiles. Jobs in the same
 * order as run_jobs: (image, row panel, column block), or (image, column panel, row panel) with pmajor. */
static __attribute__((noinline)) void run_lin(const conv_job *q, const be_epi *e, long C, long j0, long j1,
                                              const int act) {
    const int R = q->rows;
    const long M = q->M, ohw = q->ohw, mp = q->mp, ncb = q->ncb, np = q->np;
    long cb = j0 % ncb, p = j0 / ncb % mp, n = j0 / ncb / mp;
    if (q->pmajor) p = j0 % mp, cb = j0 / mp % ncb, n = j0 / mp / ncb;
    be_epi ep = *e;
    if (e->add1) ep.add1 = e->add1 + n * M * ohw;
    for (long job = j0; job < j1; job++) {
        const long i0 = p * R;
        const int mr = (int)(ohw - i0 < R ? ohw - i0 : R);
        const float *a = q->xp + (n * ohw + i0) * C;
        float *y = q->y + (n * ohw + i0) * M;
        const long qa = ncb == 1 ? 0 : np * cb / ncb, qb = ncb == 1 ? np : np * (cb + 1) / ncb;
        for (long qq = qa; qq < qb;) qq += lin_tile(q, &ep, C, a, y, i0, mr, qq, qb, act);
        const long n0 = n;
        if (q->pmajor) {
            if (++p == mp) p = 0, cb = cb + 1 == ncb ? (n++, 0) : cb + 1;
        } else if (++cb == ncb) {
            cb = 0;
            if (++p == mp) p = 0, n++;
        }
        if (n != n0 && e->add1) ep.add1 = e->add1 + n * M * ohw;
    }
}

static void run_act(const conv_job *q, const be_conv_geo *g, const be_epi *e, int t, long j0, long j1, int act,
                    const int LIN) {
    if (LIN && q->out_nhwc && act != -2) {
        switch (act) {
        case BE_ACT_NONE: run_lin(q, e, g->C, j0, j1, BE_ACT_NONE); return;
        case BE_ACT_RELU: run_lin(q, e, g->C, j0, j1, BE_ACT_RELU); return;
        case BE_ACT_CLIP: run_lin(q, e, g->C, j0, j1, BE_ACT_CLIP); return;
        default: run_lin(q, e, g->C, j0, j1, -1); return;
        }
    }
    switch (act) {
    case -2: run_jobs(q, g, e, t, j0, j1, -2, 0); break;
    case BE_ACT_NONE: run_jobs(q, g, e, t, j0, j1, BE_ACT_NONE, LIN); break;
    case BE_ACT_RELU: run_jobs(q, g, e, t, j0, j1, BE_ACT_RELU, LIN); break;
    case BE_ACT_CLIP: run_jobs(q, g, e, t, j0, j1, BE_ACT_CLIP, LIN); break;
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
