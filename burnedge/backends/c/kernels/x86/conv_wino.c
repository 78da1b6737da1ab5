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
 * Every output is the same sum in the same order whatever the thread count. NEON: the same steps on 4-float
 * vectors (conv_tile.h tile_neon). AVX-512 (BE_ISA_X86_AVX512F): the 16 products on zmm, two column panels at
 * a time, 12 accumulators (x86_zmm_conv.h wino_rows2; wino_rows for an odd last panel; measured: jobs of 2-4 row
 * panels per weight load were slower, their transforms outgrow L1). Small planes with weights past 1 MB take the
 * shared mode of conv.h (be_conv_wino_shared): every patch transformed once, then jobs by pairs of column panels.
 */
#include "conv.h"
#include "x86_conv_tile.h"

/* transform_in, 8 channels of patch r at base + c: a vector path (continue), else the portable one */
#define WINO_IN_VEC()                                                                                                  \
    if (!w->portable) {                                                                                                \
        __m256 d[16], v[16];                                                                                           \
        for (int i = 0; i < 4; i++)                                                                                    \
            for (int j = 0; j < 4; j++) d[i * 4 + j] = _mm256_loadu_ps(base + (i * wp + j) * C + c);                   \
        WINO_IN(__m256, _mm256_add_ps, _mm256_sub_ps);                                                                 \
        for (int xi_ = 0; xi_ < 16; xi_++) _mm256_storeu_ps(vb + (xi_ * BE_MR + r) * C + c, v[xi_]);                   \
        continue;                                                                                                      \
    }

/* transform_out, the n <= 8 columns h.. of patch r: a vector path, `else` the portable one */
#define WINO_OUT_VEC()                                                                                                 \
    if (!w->portable) {                                                                                                \
        __m256 m[16], y[4];                                                                                            \
        for (int xi_ = 0; xi_ < 16; xi_++) m[xi_] = _mm256_loadu_ps(mb + (xi_ * BE_MR + r) * BE_NR + h);               \
        WINO_OUT(__m256, _mm256_add_ps, _mm256_sub_ps);                                                                \
        for (int a = 0; a < 2; a++)                                                                                    \
            for (int b = 0; b < 2; b++) {                                                                              \
                const long oy = 2 * ty + a, ox = 2 * tx + b, pix = oy * g->OW + ox;                                    \
                if (oy >= g->OH || ox >= g->OW) continue;                                                              \
                float *dst = w->out_nhwc ? yi + pix * M + jc + h : ys[a * 2 + b];                                      \
                be_epi8_store(dst, y[a * 2 + b], ep, pix, jc + h, n);                                                  \
            }                                                                                                          \
    } else

/* wino_thread's locals of a vector path */
#define WINO_LOCALS()                                                                                                  \
    const be_epi none = {1.0f, 1.0f, 0, 0, 0, 0, 0, 0, BE_ACT_NONE, 0.0f, 0.0f};

#define WINO_PANEL_VEC()

#ifdef BE_ISA_X86_AVX512F
#include "x86_zmm_conv.h" /* wino_rows: the 6 patches x 16 channels on zmm */
/* product xi_ of panel q: the zmm tile (continue), else the portable loop */
#define WINO_PRODUCT_VEC()                                                                                             \
    if (!w->portable) { /* rows past mr hold stale patches: computed, never stored */                                  \
        wino_rows(C, a, b, mb + xi_ * BE_MR * BE_NR);                                                                  \
        continue;                                                                                                      \
    }
/* panels q and q + 1 together when both are in the range (q skips one), else one by one */
#define WINO_PAIR_VEC()                                                                                                \
    if (!w->portable && q + 1 < q1) {                                                                                  \
        for (int xi_ = 0; xi_ < 16; xi_++)                                                                             \
            wino_rows2(C, vb + xi_ * BE_MR * C, w->upack + (xi_ * w->np + q) * BE_NR * C,                              \
                       mb + xi_ * BE_MR * BE_NR, mb + (16 + xi_) * BE_MR * BE_NR);                                     \
        transform_out(w, &ep, yi, p, mr, jc, nr, mb);                                                                  \
        const long jc1 = jc + BE_NR;                                                                                   \
        transform_out(w, &ep, yi, p, mr, jc1, (int)(w->M - jc1 < BE_NR ? w->M - jc1 : BE_NR),                          \
                      mb + 16 * BE_MR * BE_NR);                                                                        \
        q++;                                                                                                           \
        continue;                                                                                                      \
    }
#else
/* product xi_ of panel q: a vector tile (continue), else the portable loop */
#define WINO_PRODUCT_VEC()                                                                                             \
    if (!w->portable) { /* rows past mr hold stale patches: computed, never stored */                                  \
        tile_avx2(C, 0, base, BE_MR, b, BE_NR, mb + xi_ * BE_MR * BE_NR, BE_NR, &none, 0, 0, BE_ACT_NONE,              \
                  C, 2, 6);                                                                                            \
        continue;                                                                                                      \
    }
#endif

#include "conv_wino_loops.h"
