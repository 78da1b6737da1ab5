/* The channels-last int8 conv of the x86 set: reference/qconv_nhwc.c's implicit GEMM (qconv_nhwc_loops.h), and on
 * AVX-512 VNNI builds a path of its own for 1x1 convs read in place (direct rows, an NHWC output, every channel's
 * rule in be_rq16's short form) of K <= 160, or of M <= 96 and K <= 384: MobileNet's expansions (16 -> 96 at
 * 112x112) and narrow projections, whose time went to packing A panels, permuting B every tile and requantising;
 * and convs of K <= 32 that are not read in place (stems: 3 -> 32 3x3 stride 2), their im2col rows gathered per job
 * from the GEMM's padded band copy (pad_copy, gather_rows).
 *
 * Why it is exact: vpdpbusd multiplies unsigned by signed bytes. Here the activations take the unsigned side,
 * flipped to u = a + 128, and the weights stay signed, so sum_k u(k) w(k) = sum_k a(k) w(k) + 128 * sum_k w(k): the
 * second term is per column (channel), taken out of the accumulators' start (bias - 128 * colsum, wrapping int32
 * like every sum here: the same bits whenever the exact sum fits int32, as the spec requires).
 *
 * Per job (64 output pixels, fewer past K = 256): the pixels' K bytes, flipped, as kq = ceil(K/4) quads each (zero
 * past K; pixels past the image zero too, never stored). Per 16-column panel: its kq weight quads (the B panel's
 * pair rows permuted once per job, not once per tile; in registers for K <= 32, else in L1), the column sums from
 * vpdpbusd on bytes of 1, the rule's constants in registers; then 8 pixels at a time (and two panels at a time past
 * K = 32, each broadcast quad meeting both): kq broadcast quads and vpdpbusd per pixel and panel, be_rq16's
 * short form, be_rq_narrow64, one 16-byte store per pixel (masked to the column tail). Integer results do not depend on the thread count or the job split. */
#include "qconv.h"
#include "x86_qgemm.h"

#ifdef BE_ISA_X86_VNNI512
static int q1_conv(const int8_t *x, const int8_t *bpack, int8_t *y, const be_qepi *e, const be_qconv_geo *g, int flags,
                   int32_t x_zp, int8_t *scratch, int threads);
#define QCONV_NHWC_SET q1_conv
#endif
#include "qconv_nhwc_loops.h"

#ifdef BE_ISA_X86_VNNI512
#define Q1_PIX 64   /* output pixels per job (fewer where K > 256: Q1_ABUF quads in all) */
#define Q1_ABUF 4096
#define Q1_MAXK 384

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
    const int8_t *x, *bpack; /* x: the direct rows (pixel p's K bytes at x + p*K), or NULL: gathered from xp */
    int8_t *y;
    const be_qepi *e;
    long P, K, M, pix; /* pixels per job */
    const int8_t *xp;  /* im2col convs: the band's padded copy, its first output row oy0 and pixel p0 */
    const be_qconv_geo *g;
    long oy0, p0;
} q1_call;

/* the rule's constants of one 16-column panel, and its accumulators' start */
typedef struct {
    __m512i m, mo, rnd, sh, start;
    int nr;
} q1_panel;

/* panel j0 / 16 of the weights: its kq = (K + 3) / 4 quads at w[0], w[step], ... (permuted from the B panel's pair
 * rows), the column sums taken out of the bias; kq a constant where inlined (q1_block): the quads in registers */
static inline __attribute__((always_inline)) q1_panel q1_prep(const q1_call *c, long j0, __m512i *w, long step,
                                                             const int kq) {
    const long k2 = (c->K + 1) / 2;
    const int8_t *bp = c->bpack + j0 / BE_QNR * k2 * 32;
    const __m512i perm = _mm512_loadu_si512((const void *)Q1_PAIR_TO_QUAD), ones = _mm512_set1_epi8(1);
    __m512i cs = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int q = 0; q < kq; q++) {
        const __m512i v = 2 * q + 1 < k2 ? _mm512_loadu_si512((const void *)(bp + q * 64))
                                         : _mm512_maskz_loadu_epi8(0xFFFFFFFFull, bp + q * 64);
        w[q * step] = _mm512_permutexvar_epi16(perm, v);
        cs = _mm512_dpbusd_epi32(cs, ones, w[q * step]);
    }
    const be_qepi *e = c->e;
    q1_panel t;
    t.nr = (int)(c->M - j0 < BE_QNR ? c->M - j0 : BE_QNR);
    t.m = _mm512_loadu_si512((const void *)(e->mult + j0)); /* per-column arrays are padded to 16 */
    t.mo = _mm512_srli_epi64(t.m, 32);
    t.sh = _mm512_sub_epi32(_mm512_loadu_si512((const void *)(e->shift + j0)), _mm512_set1_epi32(32));
    t.rnd = _mm512_sllv_epi32(_mm512_set1_epi32(1), _mm512_sub_epi32(t.sh, _mm512_set1_epi32(1)));
    const __m512i bias = e->bias ? _mm512_loadu_si512((const void *)(e->bias + j0)) : _mm512_setzero_si512();
    t.start = _mm512_sub_epi32(bias, _mm512_slli_epi32(cs, 7));
    return t;
}

/* 8 pixels' accumulators of one panel through the rule, narrowed, the first `rows` stored at d (pixels M apart) */
static inline __attribute__((always_inline)) void q1_store8(const __m512i *acc, const q1_panel *t, int rows,
                                                            const be_qepi *e, long M, int8_t *d) {
    const __m512i zp16 = _mm512_set1_epi16((int16_t)e->zp);
    const __m512i lo = _mm512_set1_epi8((int8_t)e->lo), hi = _mm512_set1_epi8((int8_t)e->hi);
    __m512i r8[8];
    for (int r = 0; r < 8; r++) r8[r] = q1_rq(acc[r], t->m, t->mo, t->rnd, t->sh);
    const __m512i b0 = be_rq_narrow64(r8[0], r8[1], r8[2], r8[3], zp16, lo, hi);
    const __m512i b1 = be_rq_narrow64(r8[4], r8[5], r8[6], r8[7], zp16, lo, hi);
    const __m128i o[8] = {_mm512_castsi512_si128(b0), _mm512_extracti32x4_epi32(b0, 1),
                          _mm512_extracti32x4_epi32(b0, 2), _mm512_extracti32x4_epi32(b0, 3),
                          _mm512_castsi512_si128(b1), _mm512_extracti32x4_epi32(b1, 1),
                          _mm512_extracti32x4_epi32(b1, 2), _mm512_extracti32x4_epi32(b1, 3)};
    if (t->nr == BE_QNR && rows == 8) {
        for (int r = 0; r < 8; r++) _mm_storeu_si128((__m128i *)(d + r * M), o[r]);
    } else {
        const __mmask16 keep = (__mmask16)((1u << t->nr) - 1u);
        for (int r = 0; r < rows; r++) _mm_mask_storeu_epi8(d + r * M, keep, o[r]);
    }
}

/* pixels [p0, p0 + np) (np <= Q1_PIX) of the KQ-quad conv: a[p * KQ + q] = quad q of pixel p, flipped; the
 * panel's KQ weight quads stay in registers */
static inline __attribute__((always_inline)) void q1_block(const int KQ, const int32_t *a, long np, const q1_call *c,
                                                           int8_t *yb) {
    const long M = c->M;
    for (long j0 = 0; j0 < M; j0 += BE_QNR) {
        __m512i w[8];
        const q1_panel t = q1_prep(c, j0, w, 1, KQ);
        for (long i = 0; i < np; i += 8) {
            const int32_t *ap = a + i * KQ;
            __m512i acc[8];
            for (int r = 0; r < 8; r++) acc[r] = t.start;
#pragma GCC unroll 8
            for (int q = 0; q < KQ; q++)
#pragma GCC unroll 8
                for (int r = 0; r < 8; r++)
                    acc[r] = _mm512_dpbusd_epi32(acc[r], _mm512_set1_epi32(ap[r * KQ + q]), w[q]);
            q1_store8(acc, &t, (int)(np - i < 8 ? np - i : 8), c->e, M, yb + i * M + j0);
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
/* any K up to Q1_MAXK: two panels (32 columns) at a time where there are, weight quads from L1 (interleaved:
 * w[2q + panel]), each broadcast quad meeting both panels' weights */
static __attribute__((noinline)) void q1_block_any(const int32_t *a, long np, const q1_call *c, int8_t *yb) {
    __m512i w[2 * (Q1_MAXK / 4)];
    const long M = c->M, kq = (c->K + 3) / 4;
    for (long j0 = 0; j0 < M; j0 += 2 * BE_QNR) {
        const int two = M - j0 > BE_QNR;
        q1_panel t[2];
        t[0] = q1_prep(c, j0, w, 2, (int)kq);
        t[1] = two ? q1_prep(c, j0 + BE_QNR, w + 1, 2, (int)kq) : t[0];
        for (long i = 0; i < np; i += 8) {
            const int32_t *ap = a + i * kq;
            __m512i acc0[8], acc1[8];
            for (int r = 0; r < 8; r++) acc0[r] = t[0].start, acc1[r] = t[1].start;
            if (two) {
                for (long q = 0; q < kq; q++) {
                    const __m512i w0 = w[2 * q], w1 = w[2 * q + 1];
                    for (int r = 0; r < 8; r++) {
                        const __m512i b = _mm512_set1_epi32(ap[r * kq + q]);
                        acc0[r] = _mm512_dpbusd_epi32(acc0[r], b, w0);
                        acc1[r] = _mm512_dpbusd_epi32(acc1[r], b, w1);
                    }
                }
            } else {
                for (long q = 0; q < kq; q++)
                    for (int r = 0; r < 8; r++)
                        acc0[r] = _mm512_dpbusd_epi32(acc0[r], _mm512_set1_epi32(ap[r * kq + q]), w[2 * q]);
            }
            const int rows = (int)(np - i < 8 ? np - i : 8);
            q1_store8(acc0, &t[0], rows, c->e, M, yb + i * M + j0);
            if (two) q1_store8(acc1, &t[1], rows, c->e, M, yb + i * M + j0 + BE_QNR);
        }
    }
}

static void q1_jobs(void *ctx, int tid, long lo, long hi) {
    (void)tid;
    const q1_call *c = ctx;
    const long K = c->K, kq = (K + 3) / 4, pix = c->pix;
    void (*const fn[9])(const int32_t *, long, const q1_call *, int8_t *) = {
        q1_block_any, q1_block1, q1_block2, q1_block3, q1_block4, q1_block5, q1_block6, q1_block7, q1_block8};
    int32_t a[Q1_ABUF + 64]; /* + 64: the last pixel's 64-byte stores */
    int8_t rows[Q1_PIX * 32 + 64]; /* gathered im2col rows (K <= 32), + the gather's 64 slack bytes */
    for (long job = lo; job < hi; job++) {
        const long p0 = job * pix, np = c->P - p0 < pix ? c->P - p0 : pix;
        const int8_t *xs = c->x ? c->x + p0 * K : rows;
        if (!c->x) gather_rows(c->xp, c->g, c->oy0, c->p0 + p0, (int)np, rows, K);
        for (long p = 0; p < np; p++) { /* flipped where k < K, zero past it */
            const int8_t *src = xs + p * K;
            int32_t *d = a + p * kq;
            for (long k = 0; k < K; k += 64) {
                const __mmask64 km = K - k >= 64 ? ~0ull : (1ull << (K - k)) - 1ull;
                _mm512_storeu_si512((void *)(d + k / 4),
                                    _mm512_xor_si512(_mm512_maskz_loadu_epi8(km, src + k),
                                                     _mm512_maskz_mov_epi8(km, _mm512_set1_epi8((char)0x80))));
            }
        }
        for (long p = np; p < (np + 7) / 8 * 8; p++) memset(a + p * kq, 0, (size_t)kq * 4);
        fn[kq <= 8 ? kq : 0](a, np, c, c->y + p0 * c->M);
    }
}

/* convs with an NHWC output and every channel in the short form: 1x1 direct ones of K <= 160 or M <= 96 (K <= 384),
 * and others (stems) of K <= 32, their im2col rows gathered per job from the padded band copy (qconv_nhwc_loops.h);
 * else 0 (the GEMM runs) */
static int q1_conv(const int8_t *x, const int8_t *bpack, int8_t *y, const be_qepi *e, const be_qconv_geo *g, int flags,
                   int32_t x_zp, int8_t *scratch, int threads) {
    const long K = (long)g->C * g->KH * g->KW, M = g->M, ohw = (long)g->OH * g->OW;
    const int direct = be_qconv_nhwc_direct(g, flags);
    /* measured against the GEMM's 6 x 32 tiles (Zen 4): ahead or even up to K = 160, and up to K = 384 on outputs of
     * at most 96 channels (behind on 320 -> 1280) */
    if (!(flags & 2) || !e->per_col || K < 1 || K > Q1_MAXK || (K > 160 && M > 96) || (!direct && K > 32)) return 0;
    for (long j = 0; j < M; j++)
        if (e->shift[j] < 33 && e->mult[j] != 0) return 0;
    const long kq = (K + 3) / 4, room = Q1_ABUF / kq / 8 * 8, pix = room < Q1_PIX ? room : Q1_PIX;
    if (direct) {
        const long P = (long)g->N * ohw, jobs = (P + pix - 1) / pix;
        q1_call c = {x, bpack, y, e, P, K, M, pix, NULL, g, 0, 0};
        be_parallel(qthreads(threads, (double)P * M * K, jobs), jobs, q1_jobs, &c);
        return 1;
    }
    const long band = be_qconv_nhwc_band(g), hw = (long)g->H * g->W;
    for (long n = 0; n < g->N; n++)
        for (long oy0 = 0; oy0 < g->OH; oy0 += band) {
            const long oy1 = oy0 + band < g->OH ? oy0 + band : g->OH, p0 = oy0 * g->OW, P = (oy1 - oy0) * g->OW;
            const long jobs = (P + pix - 1) / pix;
            const int nt = qthreads(threads, (double)P * M * K, jobs);
            pad_copy_par(x + n * g->C * hw, flags & 1, g, (int8_t)x_zp, oy0 * g->sh,
                         be_qconv_nhwc_rows_in(g, oy1 - oy0), scratch, nt);
            q1_call c = {NULL, bpack, y + (n * ohw + p0) * M, e, P, K, M, pix, scratch, g, oy0, p0};
            be_parallel(nt, jobs, q1_jobs, &c);
        }
    return 1;
}
#endif
