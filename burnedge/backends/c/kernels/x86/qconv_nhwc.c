/* The channels-last int8 conv of the x86 set: reference/qconv_nhwc.c's implicit GEMM (qconv_nhwc_loops.h), and on
 * AVX-512 VNNI builds a path of its own for 1x1 convs of at most 32 input channels read in place (direct rows, an
 * NHWC output, every channel's rule in be_rq16's short form): MobileNet's expansions (16 -> 96 at 112x112), whose
 * time went to packing A panels, permuting B every tile and requantising, not to multiply-adds.
 *
 * Why it is exact: vpdpbusd multiplies unsigned by signed bytes. Here the activations take the unsigned side,
 * flipped to u = a + 128, and the weights stay signed, so sum_k u(k) w(k) = sum_k a(k) w(k) + 128 * sum_k w(k): the
 * second term is per column (channel), taken out of the accumulators' start (bias - 128 * colsum, wrapping int32
 * like every sum here: the same bits whenever the exact sum fits int32, as the spec requires).
 *
 * Per job (64 output pixels): the pixels' K bytes, flipped, as kq = ceil(K/4) quads each (zero past K; pixels past
 * the image zero too, never stored). Per 16-column panel: its kq weight quads in registers (the B panel's pair rows
 * permuted once per job, not once per tile), the column sums from vpdpbusd on bytes of 1, the rule's constants in
 * registers; then 8 pixels at a time: kq broadcast quads and vpdpbusd per pixel, be_rq16's short form (the hi word of
 * the 64-bit products gathered by one masked vpshufd), be_rq_narrow64, one 16-byte store per pixel (masked to the
 * column tail). Integer results do not depend on the thread count or the job split. */
#include "qconv.h"
#include "x86_qgemm.h"

#ifdef BE_ISA_X86_VNNI512
static int q1x1_small(const int8_t *x, const int8_t *bpack, int8_t *y, const be_qepi *e, const be_qconv_geo *g,
                      int flags, int threads);
#define QCONV_NHWC_DIRECT q1x1_small
#endif
#include "qconv_nhwc_loops.h"

#ifdef BE_ISA_X86_VNNI512
#define Q1_PIX 64 /* output pixels per job */

/* word w of the result = word (w & 1) * 16 + w / 2 of the pair rows (qvnni512.c's PAIR_TO_QUAD) */
static const int16_t Q1_PAIR_TO_QUAD[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
                                            8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};

/* the short form of be_rq16 (every lane s >= 33 or m == 0): t = (hi(acc * m) + 2^(s-33)) >> (s-32) */
static inline __attribute__((always_inline)) __m512i q1_rq(__m512i acc, __m512i m, __m512i mo, __m512i rnd,
                                                            __m512i sh) {
    const __m512i pe = _mm512_mul_epi32(acc, m), po = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), mo);
    const __m512i h = _mm512_mask_shuffle_epi32(po, 0x5555, pe, (_MM_PERM_ENUM)0xF5); /* even lanes: hi(pe) */
    return _mm512_srav_epi32(_mm512_add_epi32(h, rnd), sh);
}

typedef struct {
    const int8_t *x, *bpack;
    int8_t *y;
    const be_qepi *e;
    long P, K, M;
} q1_call;

/* pixels [p0, p0 + np) (np <= Q1_PIX) of the KQ-quad conv: a[p * KQ + q] = quad q of pixel p, flipped */
static inline __attribute__((always_inline)) void q1_block(const int KQ, const int32_t *a, long np, const q1_call *c,
                                                           int8_t *yb) {
    const long M = c->M, k2 = (c->K + 1) / 2;
    const be_qepi *e = c->e;
    const __m512i perm = _mm512_loadu_si512((const void *)Q1_PAIR_TO_QUAD), ones = _mm512_set1_epi8(1);
    const __m512i zp16 = _mm512_set1_epi16((int16_t)e->zp);
    const __m512i lo = _mm512_set1_epi8((int8_t)e->lo), hi = _mm512_set1_epi8((int8_t)e->hi);
    for (long j0 = 0; j0 < M; j0 += BE_QNR) {
        const int8_t *bp = c->bpack + j0 / BE_QNR * k2 * 32;
        __m512i w[8], cs = _mm512_setzero_si512();
        for (int q = 0; q < KQ; q++) {
            const __m512i v = 2 * q + 1 < k2 ? _mm512_loadu_si512((const void *)(bp + q * 64))
                                             : _mm512_maskz_loadu_epi8(0xFFFFFFFFull, bp + q * 64);
            w[q] = _mm512_permutexvar_epi16(perm, v);
            cs = _mm512_dpbusd_epi32(cs, ones, w[q]);
        }
        const int nr = (int)(M - j0 < BE_QNR ? M - j0 : BE_QNR);
        const __mmask16 keep = (__mmask16)((1u << nr) - 1u);
        /* per-column arrays are padded to 16 */
        const __m512i m = _mm512_loadu_si512((const void *)(e->mult + j0)), mo = _mm512_srli_epi64(m, 32);
        const __m512i sh = _mm512_sub_epi32(_mm512_loadu_si512((const void *)(e->shift + j0)), _mm512_set1_epi32(32));
        const __m512i rnd = _mm512_sllv_epi32(_mm512_set1_epi32(1), _mm512_sub_epi32(sh, _mm512_set1_epi32(1)));
        const __m512i bias = e->bias ? _mm512_loadu_si512((const void *)(e->bias + j0)) : _mm512_setzero_si512();
        const __m512i start = _mm512_sub_epi32(bias, _mm512_slli_epi32(cs, 7));
        for (long i = 0; i < np; i += 8) {
            const int32_t *ap = a + i * KQ;
            __m512i acc[8];
            for (int r = 0; r < 8; r++) acc[r] = start;
            for (int q = 0; q < KQ; q++)
                for (int r = 0; r < 8; r++) acc[r] = _mm512_dpbusd_epi32(acc[r], _mm512_set1_epi32(ap[r * KQ + q]), w[q]);
            __m512i t[8];
            for (int r = 0; r < 8; r++) t[r] = q1_rq(acc[r], m, mo, rnd, sh);
            const __m512i b0 = be_rq_narrow64(t[0], t[1], t[2], t[3], zp16, lo, hi);
            const __m512i b1 = be_rq_narrow64(t[4], t[5], t[6], t[7], zp16, lo, hi);
            const __m128i o[8] = {_mm512_castsi512_si128(b0), _mm512_extracti32x4_epi32(b0, 1),
                                  _mm512_extracti32x4_epi32(b0, 2), _mm512_extracti32x4_epi32(b0, 3),
                                  _mm512_castsi512_si128(b1), _mm512_extracti32x4_epi32(b1, 1),
                                  _mm512_extracti32x4_epi32(b1, 2), _mm512_extracti32x4_epi32(b1, 3)};
            int8_t *d = yb + i * M + j0;
            const int rows = (int)(np - i < 8 ? np - i : 8);
            if (nr == BE_QNR && rows == 8)
                for (int r = 0; r < 8; r++) _mm_storeu_si128((__m128i *)(d + r * M), o[r]);
            else
                for (int r = 0; r < rows; r++) _mm_mask_storeu_epi8(d + r * M, keep, o[r]);
        }
    }
}

#define Q1_KQ(N)                                                                                                 \
    static __attribute__((noinline)) void q1_block##N(const int32_t *a, long np, const q1_call *c, int8_t *yb) { \
        q1_block(N, a, np, c, yb);                                                                               \
    }
Q1_KQ(1)
Q1_KQ(2)
Q1_KQ(3)
Q1_KQ(4)
Q1_KQ(5)
Q1_KQ(6)
Q1_KQ(7)
Q1_KQ(8)
#undef Q1_KQ

static void q1_jobs(void *ctx, int tid, long lo, long hi) {
    (void)tid;
    const q1_call *c = ctx;
    const long K = c->K, kq = (K + 3) / 4;
    void (*const fn[8])(const int32_t *, long, const q1_call *, int8_t *) = {
        q1_block1, q1_block2, q1_block3, q1_block4, q1_block5, q1_block6, q1_block7, q1_block8};
    int32_t a[Q1_PIX * 8 + 8]; /* + 8: the last pixel's 32-byte store */
    const __mmask32 km = (__mmask32)(K >= 32 ? 0xFFFFFFFFu : (1u << K) - 1u);
    const __m256i flip = _mm256_maskz_mov_epi8(km, _mm256_set1_epi8((char)0x80));
    for (long job = lo; job < hi; job++) {
        const long p0 = job * Q1_PIX, np = c->P - p0 < Q1_PIX ? c->P - p0 : Q1_PIX;
        for (long p = 0; p < np; p++) /* flipped where k < K, zero past it */
            _mm256_storeu_si256((__m256i *)(a + p * kq),
                                _mm256_xor_si256(_mm256_maskz_loadu_epi8(km, c->x + (p0 + p) * K), flip));
        for (long p = np; p < (np + 7) / 8 * 8; p++) memset(a + p * kq, 0, (size_t)kq * 4);
        fn[kq - 1](a, np, c, c->y + p0 * c->M);
    }
}

/* 1x1 direct convs of K <= 32 with an NHWC output and every channel in the short form; else 0 (the GEMM runs) */
static int q1x1_small(const int8_t *x, const int8_t *bpack, int8_t *y, const be_qepi *e, const be_qconv_geo *g,
                      int flags, int threads) {
    const long K = g->C, M = g->M, P = (long)g->N * g->OH * g->OW;
    if (!(flags & 2) || !e->per_col || K > 32 || K < 1) return 0;
    for (long j = 0; j < M; j++)
        if (e->shift[j] < 33 && e->mult[j] != 0) return 0;
    q1_call c = {x, bpack, y, e, P, K, M};
    const long jobs = (P + Q1_PIX - 1) / Q1_PIX;
    be_parallel(qthreads(threads, (double)P * M * K, jobs), jobs, q1_jobs, &c);
    return 1;
}
#endif
