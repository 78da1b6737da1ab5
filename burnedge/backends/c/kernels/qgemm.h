/* int8 matrix products (burnedge.QMatMul, and the core of burnedge.QConv) with exact fixed-point requantisation.
 *
 * Requantisation (burnedge/quantize/qparams.py `requantize`): y = clamp(zp + floor((acc * m + 2^(s-1)) / 2^s))
 * with s = 31 - shift. Kernels take per-channel parameters already normalised by the lowering (`be_rq`):
 *   m == 0 or s >= 63  -> (m = 0, s = 32)      the result is 0 for every accumulator;
 *   s <= 0             -> (m = 2^30, s = 1)    every non-zero accumulator saturates, as it does with the original;
 *   L = 1 (s <= 20), 2^(s-21) (21 <= s <= 31), INT32_MAX (s >= 32): clamping acc to [-L, L] changes no result
 *       (past L the output saturates anyway) and keeps the vector path's products in range.
 * so 1 <= s <= 62 everywhere, and the rule reads exactly like the docstring's C.
 *
 * Packed layouts (int16 pairs along K so that one _mm256_madd_epi16 does 16 exact multiply-adds):
 *   A panels: rows in panels of BE_QMR; K in pairs (K2 = ceil(K/2)); panel p holds the pair
 *             (A(p*MR + r, 2kp), A(p*MR + r, 2kp + 1)) as two int16 at a[(kp*MR + r)*2 + {0, 1}], zero-padded.
 *   B panels: columns in panels of BE_QNR = 16; the pair (B(2kp, c), B(2kp + 1, c)) as two int8 at
 *             b[kp*32 + 2c + {0, 1}] (sign-extended to int16 in the kernel), zero-padded.
 */
#ifndef BURNEDGE_QGEMM_H
#define BURNEDGE_QGEMM_H

#include "burnedge.h"

#define BE_QMR 6
#define BE_QNR 16
#define BE_Q_MAX_THREADS 4

/* the epilogue of an int32 accumulator tile: acc + bias[ch] (wrapping int32), requantised per channel ch, where
 * ch is the tile's row (per_col == 0: conv, channels are rows) or its column (per_col == 1: matmul). Channel
 * arrays of a per_col epilogue are zero-padded to a multiple of 16. */
typedef struct {
    const int32_t *bias; /* NULL: none */
    const int32_t *mult, *shift, *lim; /* normalised m, s (1..62) and L per channel */
    int32_t zp, lo, hi;
    int per_col;
} be_qepi;

/* one accumulator through the rule (normalised parameters) */
static inline int8_t be_rq1(int32_t acc, int32_t m, int32_t s, int32_t lim, int32_t zp, int32_t lo, int32_t hi) {
    int64_t a = acc < -lim ? -lim : (acc > lim ? lim : acc);
    int64_t t = (a * m + ((int64_t)1 << (s - 1))) >> s;
    int64_t y = zp + t;
    return (int8_t)(y < lo ? lo : (y > hi ? hi : y));
}

/* tile: Y(mr x nr) int8 at y[r*ldy + c] = epilogue(A panel (K2 pairs) * B panel (K2 pairs)), tile origin
 * (i0, j0) in the whole product (selects bias/requant channels). */
void be_qgemm_tile(long k2, const int16_t *a, const int8_t *b, int mr, int nr, int8_t *y, long ldy,
                   const be_qepi *e, long i0, long j0);

/* QMatMul: Y(M x N) int8 = requant((A - a_zp) * B + bias): A(i, k) = a[i*lda + k] (int8, packed to int16 pairs
 * in scratch), B pre-packed in B panels, per-column epilogue. scratch: be_qgemm_scratch(K) bytes. */
void be_qgemm_i8(long M, long N, long K, const int8_t *a, long lda, int32_t a_zp, const int8_t *bpack, int8_t *y,
                 long ldy, const be_qepi *e, int16_t *scratch, int threads);
static inline long be_qgemm_scratch(long K) { return (long)BE_Q_MAX_THREADS * ((K + 1) / 2) * BE_QMR * 4 + 64; }

/* One row panel against every column panel: rows r < mr (<= BE_QMR) of raw int8 A (row r at a + r*lda, K values)
 * times all N columns of B panels `bpack`, to y[r*ldy + c] with the epilogue's channel of column c (per_col) or of
 * row i0 + r. The panel is packed into `apanel` (be_qgemm_panel_bytes(K)) as int16 pairs, or int8 quads for the
 * sdot tile. kread >= K: how far each row may be read (K + 16: whole 16-byte loads past K, no copies of the row
 * ends). Used by the channels-last convolutions (qconv_nhwc.c): rows = output pixels, columns = channels. */
void be_qgemm_panel(const int8_t *a, long lda, long K, long kread, int mr, long N, const int8_t *bpack, int8_t *y,
                    long ldy, const be_qepi *e, long i0, void *apanel);
static inline long be_qgemm_panel_bytes(long K) { return ((K + 3) / 4) * 2 * BE_QMR * 4 + 64; }

/* ARM (qgemm.c): the int16-pair tile with vmlal_lane_s16 (every NEON target) and, where the compiler has
 * __ARM_FEATURE_DOTPROD (aarch64), an sdot tile on int8 quads: A quads [kq][r][4] (24 bytes per kq: rows 0..5,
 * k = 4kq..4kq+3, zero-padded), B either pair panels (made into quads in registers by 16-bit zips of two pair
 * blocks) or quad panels b[kq*64 + 4c + j] = B(4kq + j, c). Quads are only ever made at run time (QMatMul's
 * activations, QConv's im2col and its weights converted per panel), so packed weights stay the same everywhere. */
void be_qgemm_tile_neon(long k2, const int16_t *a, const int8_t *b, int mr, int nr, int8_t *y, long ldy,
                        const be_qepi *e, long i0, long j0);
void be_qgemm_tile_sdot(long k2, const int8_t *a4, const int8_t *b, int bquads, int mr, int nr, int8_t *y, long ldy,
                        const be_qepi *e, long i0, long j0);
/* an A panel of int16 pairs (values in int8's range) as int8 quads */
void be_qa_quads(const int16_t *a, long k2, int8_t *dst);

/* vector helpers shared by the int8 kernel sources only */
#if defined(BE_Q_INTERNAL) && defined(__AVX2__) && !defined(BURNEDGE_PORTABLE)
#include <immintrin.h>
#define BE_Q_AVX2 1

/* requantisation constants of 8 lanes (one channel per lane, or one channel broadcast) */
typedef struct {
    __m256i m, mo, se, so, re, ro, c, lim, nlim;
} be_rqv;

static inline __attribute__((always_inline)) be_rqv be_rqv_make(__m256i m, __m256i s, __m256i lim) {
    const __m256i one = _mm256_set1_epi64x(1), off = _mm256_set1_epi64x((int64_t)1 << 62);
    be_rqv r;
    r.m = m;
    r.mo = _mm256_srli_epi64(m, 32);
    r.se = _mm256_blend_epi32(s, _mm256_setzero_si256(), 0xAA);
    r.so = _mm256_srli_epi64(s, 32);
    r.re = _mm256_add_epi64(_mm256_sllv_epi64(one, _mm256_sub_epi64(r.se, one)), off);
    r.ro = _mm256_add_epi64(_mm256_sllv_epi64(one, _mm256_sub_epi64(r.so, one)), off);
    r.c = _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_sub_epi32(_mm256_set1_epi32(62), s)); /* 2^(62-s) mod 2^32 */
    r.lim = lim;
    r.nlim = _mm256_sub_epi32(_mm256_setzero_si256(), lim);
    return r;
}

static inline __attribute__((always_inline)) be_rqv be_rqv_bcast(int32_t m, int32_t s, int32_t lim) {
    return be_rqv_make(_mm256_set1_epi32(m), _mm256_set1_epi32(s), _mm256_set1_epi32(lim));
}

/* t = floor((clamp(acc) * m + 2^(s-1)) / 2^s) on 8 lanes: 64-bit products biased by 2^62 so that a logical
 * shift floors them; the bias (2^(62-s) after the shift) is removed in 32 bits, exact since |t| < 2^31. */
static inline __attribute__((always_inline)) __m256i be_rq8(__m256i acc, const be_rqv *r) {
    acc = _mm256_min_epi32(_mm256_max_epi32(acc, r->nlim), r->lim);
    __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(acc, r->m), r->re);
    __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(acc, 32), r->mo), r->ro);
    pe = _mm256_srlv_epi64(pe, r->se);
    po = _mm256_srlv_epi64(po, r->so);
    return _mm256_sub_epi32(_mm256_blend_epi32(pe, _mm256_slli_epi64(po, 32), 0xAA), r->c);
}

/* 16 int8 outputs from two vectors of t: saturating packs, + zp (saturating int16), then [lo, hi] */
static inline __attribute__((always_inline)) __m128i be_rq_pack16(__m256i t0, __m256i t1, __m256i zp16, __m128i lo,
                                                                  __m128i hi) {
    __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(t0, t1), 0xD8);
    p = _mm256_adds_epi16(p, zp16);
    __m128i b = _mm_packs_epi16(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
    return _mm_min_epi8(_mm_max_epi8(b, lo), hi);
}
#endif

#if defined(BE_Q_INTERNAL) && defined(__ARM_NEON) && !defined(BURNEDGE_PORTABLE)
#include <arm_neon.h>
#define BE_Q_NEON 1
#if defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD)
#define BE_Q_SDOT 1 /* vdotq_laneq_s32: the int8 dot product (rpi5, jetson-orin) */
#endif

/* requantisation constants of 4 lanes: m, the accumulator clamp, and per 2-lane half the rounding term 2^(s-1)
 * and the shift count -s (vshlq_s64 by a negative count is an arithmetic, flooring right shift) */
typedef struct {
    int32x4_t m, lim, nlim;
    int64x2_t r0, r1, ns0, ns1;
} be_rqn;

static inline __attribute__((always_inline)) be_rqn be_rqn_make(int32x4_t m, int32x4_t s, int32x4_t lim) {
    const int64x2_t one = vdupq_n_s64(1);
    const int32x4_t sm1 = vsubq_s32(s, vdupq_n_s32(1)), ns = vnegq_s32(s);
    be_rqn r;
    r.m = m;
    r.lim = lim;
    r.nlim = vnegq_s32(lim);
    r.r0 = vshlq_s64(one, vmovl_s32(vget_low_s32(sm1)));
    r.r1 = vshlq_s64(one, vmovl_s32(vget_high_s32(sm1)));
    r.ns0 = vmovl_s32(vget_low_s32(ns));
    r.ns1 = vmovl_s32(vget_high_s32(ns));
    return r;
}

static inline __attribute__((always_inline)) be_rqn be_rqn_bcast(int32_t m, int32_t s, int32_t lim) {
    return be_rqn_make(vdupq_n_s32(m), vdupq_n_s32(s), vdupq_n_s32(lim));
}

/* t = floor((clamp(acc) * m + 2^(s-1)) / 2^s) on 4 lanes, exactly the rule: 64-bit products (no vqrdmulh,
 * whose rounding differs), |t| < 2^30 by the choice of lim, so the narrowing keeps every bit */
static inline __attribute__((always_inline)) int32x4_t be_rq4n(int32x4_t acc, const be_rqn *q) {
    acc = vminq_s32(vmaxq_s32(acc, q->nlim), q->lim);
    int64x2_t p0 = vaddq_s64(vmull_s32(vget_low_s32(acc), vget_low_s32(q->m)), q->r0);
    int64x2_t p1 = vaddq_s64(vmull_s32(vget_high_s32(acc), vget_high_s32(q->m)), q->r1);
    return vcombine_s32(vmovn_s64(vshlq_s64(p0, q->ns0)), vmovn_s64(vshlq_s64(p1, q->ns1)));
}

/* 8 int8 outputs from two vectors of t: saturating narrowing, + zp (saturating int16), then [lo, hi] */
static inline __attribute__((always_inline)) int8x8_t be_rqn_pack8(int32x4_t t0, int32x4_t t1, int16x8_t zp16,
                                                                   int8x8_t lo, int8x8_t hi) {
    const int16x8_t h = vqaddq_s16(vcombine_s16(vqmovn_s32(t0), vqmovn_s32(t1)), zp16);
    return vmin_s8(vmax_s8(vqmovn_s16(h), lo), hi);
}

/* n (<= 8) int8 values to dst */
static inline __attribute__((always_inline)) void be_store8n(int8_t *dst, int8x8_t v, int n) {
    if (n == 8) {
        vst1_s8(dst, v);
    } else {
        int8_t t[8];
        vst1_s8(t, v);
        memcpy(dst, t, (size_t)n);
    }
}
#endif

#endif
