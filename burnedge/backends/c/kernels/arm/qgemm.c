/* int8 GEMM: a 6x16 micro-kernel on int16 pairs (_mm256_madd_epi16: exact, no saturation) with the
 * requantising epilogue in registers, a portable C twin, and QMatMul's loop around it.
 *
 * Algorithm (tile):
 *  1. 12 ymm int32 accumulators (6 rows x 16 columns); per K pair: two B loads of 16 int8 sign-extended to
 *     int16, one 32-bit broadcast of each row's int16 pair, one madd + add per accumulator. Every product of
 *     int16 values in [-255, 255] x [-128, 127] is exact and pairs sum in int32; accumulators wrap modulo 2^32,
 *     so they equal the exact sum whenever it fits int32 (which the spec requires). A tile of at most 8 columns
 *     keeps 6 accumulators and one B load (8-channel stems and the last panel of M % 16 <= 8 columns).
 *  2. Epilogue: + bias (per row or per column), requantise 8 lanes at a time (qgemm.h `be_rq8`), pack to int8
 *     with saturation, clamp to [lo, hi], store the tile's nr columns.
 * QMatMul: jobs are (6-row panel, range of column panels); a job packs its rows of A (minus a_zp) as int16 pairs
 * into its thread's scratch slice, then runs the tiles. Integer sums do not depend on the thread count.
 * ARM: the same tile with vmlal_lane_s16 (int16 x int16 -> int32, exact; 16 columns per pass on aarch64, 8 on
 * armv7 for its 16 registers) and, with dotprod, sdot on int8 quads (4 products per lane and instruction, exact
 * int32 sums); QMatMul then packs raw int8 A quads (the lowering folds a_zp into the bias; a nonzero a_zp keeps
 * the int16 tile). The NEON epilogue is the rule itself: 64-bit vmull_s32 products and flooring shifts.
 */
#include "qgemm.h"
#include "arm_qgemm.h"

static void tile_portable(long k2, const int16_t *a, const int8_t *b, int mr, int nr, int8_t *y, long ldy,
                          const be_qepi *e, long i0, long j0) {
    for (int r = 0; r < mr; r++) {
        for (int c = 0; c < nr; c++) {
            int64_t acc = 0;
            for (long kp = 0; kp < k2; kp++) {
                const int16_t *ap = a + (kp * BE_QMR + r) * 2;
                const int8_t *bp = b + kp * 32 + 2 * c;
                acc += (int64_t)ap[0] * bp[0] + (int64_t)ap[1] * bp[1];
            }
            const long ch = e->per_col ? j0 + c : i0 + r;
            uint32_t v = (uint32_t)acc + (e->bias ? (uint32_t)e->bias[ch] : 0u);
            y[r * ldy + c] = be_rq1((int32_t)v, e->mult[ch], e->shift[ch], e->lim[ch], e->zp, e->lo, e->hi);
        }
    }
}

/* bias + requantisation of a tile's 4-column groups g < ng (columns c0 + 4g ..), stores of at most nr columns;
 * per-column parameters that all take the short form (be_rq4n_hi) get a loop of their own, with no branch */
static inline __attribute__((always_inline)) void epi_neon(const int rows, int32x4_t acc[BE_QMR][4], const int ng,
                                                           int c0, int nr, int8_t *y, long ldy, const be_qepi *e,
                                                           long i0, long j0) {
    const int16x8_t zp16 = vdupq_n_s16((int16_t)e->zp);
    const int8x8_t lo = vdup_n_s8((int8_t)e->lo), hi = vdup_n_s8((int8_t)e->hi);
    be_rqn col[4];
    int32x4_t cb[4];
    int short_form = e->per_col;
    for (int g = 0; g < ng; g++) {
        const long j = j0 + c0 + 4 * g; /* per-column arrays are padded to 16 channels */
        col[g] = e->per_col ? be_rqn_make(vld1q_s32(e->mult + j), vld1q_s32(e->shift + j), vld1q_s32(e->lim + j))
                            : be_rqn_bcast(0, 32, 1);
        cb[g] = e->per_col && e->bias ? vld1q_s32(e->bias + j) : vdupq_n_s32(0);
        short_form = short_form && col[g].hi;
    }
    if (short_form) {
        for (int r = 0; r < rows; r++)
            for (int h = 0; 2 * h < ng; h++) {
                const int cols = nr - c0 - 8 * h;
                if (cols <= 0) break;
                const int32x4_t t0 = be_rq4n_hi(vaddq_s32(acc[r][2 * h], cb[2 * h]), &col[2 * h]);
                const int32x4_t t1 = be_rq4n_hi(vaddq_s32(acc[r][2 * h + 1], cb[2 * h + 1]), &col[2 * h + 1]);
                be_store8n(y + r * ldy + c0 + 8 * h, be_rqn_pack8(t0, t1, zp16, lo, hi), cols < 8 ? cols : 8);
            }
        return;
    }
    for (int r = 0; r < rows; r++) {
        const long ch = i0 + r;
        const be_rqn q = e->per_col ? col[0] : be_rqn_bcast(e->mult[ch], e->shift[ch], e->lim[ch]);
        const int32x4_t bb = !e->per_col && e->bias ? vdupq_n_s32(e->bias[ch]) : vdupq_n_s32(0);
        for (int h = 0; 2 * h < ng; h++) {
            const int cols = nr - c0 - 8 * h;
            if (cols <= 0) break;
            int32x4_t t0, t1;
            if (e->per_col) {
                t0 = be_rq4n(vaddq_s32(acc[r][2 * h], cb[2 * h]), &col[2 * h]);
                t1 = be_rq4n(vaddq_s32(acc[r][2 * h + 1], cb[2 * h + 1]), &col[2 * h + 1]);
            } else {
                t0 = be_rq4n(vaddq_s32(acc[r][2 * h], bb), &q);
                t1 = be_rq4n(vaddq_s32(acc[r][2 * h + 1], bb), &q);
            }
            be_store8n(y + r * ldy + c0 + 8 * h, be_rqn_pack8(t0, t1, zp16, lo, hi), cols < 8 ? cols : 8);
        }
    }
}

#ifdef BE_ISA_AARCH64
#define QN_G 4 /* 4-column groups per pass: 16 columns, 24 accumulators of 32 registers */
#else
#define QN_G 2 /* armv7: 8 columns per pass, 12 accumulators of 16 registers */
#endif

/* row R's 4*QN_G columns += B(2kp, .) * A(R, 2kp) + B(2kp + 1, .) * A(R, 2kp + 1), lanes L, L+1 of AV; LO takes
 * a B vector's low half, HI its high half (smlal2 on aarch64, a d register on armv7) */
#define QROW(R, LO, HI, AV, L)                                                                                   \
    if (rows > R)                                                                                                \
        for (int h = 0; h < QN_G / 2; h++) {                                                                     \
            acc[R][2 * h] = LO(acc[R][2 * h], vget_low_s16(be[h]), AV, L);                                       \
            acc[R][2 * h] = LO(acc[R][2 * h], vget_low_s16(bo[h]), AV, L + 1);                                   \
            acc[R][2 * h + 1] = HI(acc[R][2 * h + 1], be[h], AV, L);                                             \
            acc[R][2 * h + 1] = HI(acc[R][2 * h + 1], bo[h], AV, L + 1);                                         \
        }
#ifdef BE_ISA_AARCH64
#define QROWS(a03, a45)                                                                                          \
    QROW(0, vmlal_laneq_s16, vmlal_high_laneq_s16, a03, 0) QROW(1, vmlal_laneq_s16, vmlal_high_laneq_s16, a03, 2) \
    QROW(2, vmlal_laneq_s16, vmlal_high_laneq_s16, a03, 4) QROW(3, vmlal_laneq_s16, vmlal_high_laneq_s16, a03, 6) \
    QROW(4, vmlal_lane_s16, vmlal_high_lane_s16, a45, 0) QROW(5, vmlal_lane_s16, vmlal_high_lane_s16, a45, 2)
#else
#define QHI7(acc, b, AV, L) vmlal_lane_s16(acc, vget_high_s16(b), AV, L)
#define QROWS(a03, a45)                                                                                          \
    QROW(0, vmlal_lane_s16, QHI7, vget_low_s16(a03), 0) QROW(1, vmlal_lane_s16, QHI7, vget_low_s16(a03), 2)       \
    QROW(2, vmlal_lane_s16, QHI7, vget_high_s16(a03), 0) QROW(3, vmlal_lane_s16, QHI7, vget_high_s16(a03), 2)     \
    QROW(4, vmlal_lane_s16, QHI7, a45, 0) QROW(5, vmlal_lane_s16, QHI7, a45, 2)
#endif

static inline __attribute__((always_inline)) void tile_neon(const int rows, long k2, const int16_t *a, const int8_t *b,
                                                            int nr, int8_t *y, long ldy, const be_qepi *e, long i0,
                                                            long j0) {
    for (int c0 = 0; c0 < nr; c0 += 4 * QN_G) {
        int32x4_t acc[BE_QMR][4];
        for (int r = 0; r < BE_QMR; r++)
            for (int g = 0; g < 4; g++) acc[r][g] = vdupq_n_s32(0);
        for (long kp = 0; kp < k2; kp++) {
            int16x8_t be[2], bo[2]; /* even and odd k of 8 columns each, sign-extended */
#if QN_G == 4
            const int8x16x2_t v = vld2q_s8(b + kp * 32);
            be[0] = vmovl_s8(vget_low_s8(v.val[0]));
            be[1] = vmovl_s8(vget_high_s8(v.val[0]));
            bo[0] = vmovl_s8(vget_low_s8(v.val[1]));
            bo[1] = vmovl_s8(vget_high_s8(v.val[1]));
#else
            const int8x8x2_t v = vld2_s8(b + kp * 32 + 2 * c0);
            be[0] = be[1] = vmovl_s8(v.val[0]);
            bo[0] = bo[1] = vmovl_s8(v.val[1]);
#endif
            const int16_t *ap = a + kp * BE_QMR * 2;
            const int16x8_t a03 = vld1q_s16(ap);
            const int16x4_t a45 = vld1_s16(ap + 8);
            QROWS(a03, a45)
        }
        epi_neon(rows, acc, QN_G, c0, nr, y, ldy, e, i0, j0);
    }
}

void be_qgemm_tile_neon(long k2, const int16_t *a, const int8_t *b, int mr, int nr, int8_t *y, long ldy,
                        const be_qepi *e, long i0, long j0) {
    switch (mr) {
    case 6: tile_neon(6, k2, a, b, nr, y, ldy, e, i0, j0); return;
    case 5: tile_neon(5, k2, a, b, nr, y, ldy, e, i0, j0); return;
    case 4: tile_neon(4, k2, a, b, nr, y, ldy, e, i0, j0); return;
    case 3: tile_neon(3, k2, a, b, nr, y, ldy, e, i0, j0); return;
    case 2: tile_neon(2, k2, a, b, nr, y, ldy, e, i0, j0); return;
    default: tile_neon(1, k2, a, b, nr, y, ldy, e, i0, j0); return;
    }
}

#ifdef BE_ISA_DOTPROD
#define SROW(R, DOT, AV, L)                                                                                      \
    if (rows > R)                                                                                                \
        for (int g = 0; g < 4; g++) acc[R][g] = DOT(acc[R][g], bv[g], AV, L);

/* one quad step: every row's 16 columns += the dot products of 4 consecutive k */
static inline __attribute__((always_inline)) void sdot_step(const int rows, int32x4_t acc[BE_QMR][4],
                                                            const int8x16_t bv[4], const int8_t *aq) {
    const int8x16_t a0 = vld1q_s8(aq);
    const int8x8_t a1 = vld1_s8(aq + 16);
    SROW(0, vdotq_laneq_s32, a0, 0) SROW(1, vdotq_laneq_s32, a0, 1) SROW(2, vdotq_laneq_s32, a0, 2)
    SROW(3, vdotq_laneq_s32, a0, 3) SROW(4, vdotq_lane_s32, a1, 0) SROW(5, vdotq_lane_s32, a1, 1)
}

/* 4 columns x 4 k of each 4-column group from the pair blocks p (k 4kq, 4kq+1) and q (4kq+2, 4kq+3) */
static inline __attribute__((always_inline)) void zip_quads(int8x16_t p0, int8x16_t p1, int8x16_t q0, int8x16_t q1,
                                                            int8x16_t bv[4]) {
    bv[0] = vreinterpretq_s8_s16(vzip1q_s16(vreinterpretq_s16_s8(p0), vreinterpretq_s16_s8(q0)));
    bv[1] = vreinterpretq_s8_s16(vzip2q_s16(vreinterpretq_s16_s8(p0), vreinterpretq_s16_s8(q0)));
    bv[2] = vreinterpretq_s8_s16(vzip1q_s16(vreinterpretq_s16_s8(p1), vreinterpretq_s16_s8(q1)));
    bv[3] = vreinterpretq_s8_s16(vzip2q_s16(vreinterpretq_s16_s8(p1), vreinterpretq_s16_s8(q1)));
}

static inline __attribute__((always_inline)) void tile_sdot(const int rows, long k2, const int8_t *a4, const int8_t *b,
                                                            int bquads, int nr, int8_t *y, long ldy,
                                                            const be_qepi *e, long i0, long j0) {
    int32x4_t acc[BE_QMR][4];
    for (int r = 0; r < BE_QMR; r++)
        for (int g = 0; g < 4; g++) acc[r][g] = vdupq_n_s32(0);
    const long k4 = (k2 + 1) / 2;
    int8x16_t bv[4];
    if (bquads) {
        for (long kq = 0; kq < k4; kq++) {
            const int8_t *bp = b + kq * 64;
            bv[0] = vld1q_s8(bp), bv[1] = vld1q_s8(bp + 16), bv[2] = vld1q_s8(bp + 32), bv[3] = vld1q_s8(bp + 48);
            sdot_step(rows, acc, bv, a4 + kq * 24);
        }
    } else {
        for (long kq = 0; kq < k2 / 2; kq++) {
            const int8_t *bp = b + kq * 64;
            zip_quads(vld1q_s8(bp), vld1q_s8(bp + 16), vld1q_s8(bp + 32), vld1q_s8(bp + 48), bv);
            sdot_step(rows, acc, bv, a4 + kq * 24);
        }
        if (k2 & 1) { /* the last pair block has no partner: zeros (the A quad is zero there too) */
            const int8_t *bp = b + (k2 - 1) * 32;
            const int8x16_t z = vdupq_n_s8(0);
            zip_quads(vld1q_s8(bp), vld1q_s8(bp + 16), z, z, bv);
            sdot_step(rows, acc, bv, a4 + (k4 - 1) * 24);
        }
    }
    epi_neon(rows, acc, 4, 0, nr, y, ldy, e, i0, j0);
}

void be_qgemm_tile_sdot(long k2, const int8_t *a4, const int8_t *b, int bquads, int mr, int nr, int8_t *y, long ldy,
                        const be_qepi *e, long i0, long j0) {
    switch (mr) {
    case 6: tile_sdot(6, k2, a4, b, bquads, nr, y, ldy, e, i0, j0); return;
    case 5: tile_sdot(5, k2, a4, b, bquads, nr, y, ldy, e, i0, j0); return;
    case 4: tile_sdot(4, k2, a4, b, bquads, nr, y, ldy, e, i0, j0); return;
    case 3: tile_sdot(3, k2, a4, b, bquads, nr, y, ldy, e, i0, j0); return;
    case 2: tile_sdot(2, k2, a4, b, bquads, nr, y, ldy, e, i0, j0); return;
    default: tile_sdot(1, k2, a4, b, bquads, nr, y, ldy, e, i0, j0); return;
    }
}

/* quad kq of row r = bytes (2r, 2r+1) of pair block 2kq and (2r, 2r+1) of block 2kq+1 (12 bytes further) */
void be_qa_quads(const int16_t *a, long k2, int8_t *dst) {
    static const uint8_t i03[16] = {0, 1, 12, 13, 2, 3, 14, 15, 4, 5, 16, 17, 6, 7, 18, 19};
    static const uint8_t i45[8] = {8, 9, 20, 21, 10, 11, 22, 23};
    const uint8x16_t x03 = vld1q_u8(i03);
    const uint8x8_t x45 = vld1_u8(i45);
    long kq = 0;
    for (; 2 * kq + 1 < k2; kq++) {
        const int16_t *s = a + kq * 4 * BE_QMR;
        const int8x8_t n2 = vmovn_s16(vld1q_s16(s + 16));
        int8x16x2_t t;
        t.val[0] = vcombine_s8(vmovn_s16(vld1q_s16(s)), vmovn_s16(vld1q_s16(s + 8)));
        t.val[1] = vcombine_s8(n2, n2);
        vst1q_s8(dst + kq * 24, vqtbl2q_s8(t, x03));
        vst1_s8(dst + kq * 24 + 16, vqtbl2_s8(t, x45));
    }
    if (k2 & 1) {
        const int16_t *s = a + (k2 - 1) * 2 * BE_QMR;
        int8_t *d = dst + kq * 24;
        for (int r = 0; r < BE_QMR; r++) {
            d[4 * r] = (int8_t)s[2 * r];
            d[4 * r + 1] = (int8_t)s[2 * r + 1];
            d[4 * r + 2] = d[4 * r + 3] = 0;
        }
    }
}
#endif

void be_qgemm_tile(long k2, const int16_t *a, const int8_t *b, int mr, int nr, int8_t *y, long ldy,
                   const be_qepi *e, long i0, long j0) {
    be_qgemm_tile_neon(k2, a, b, mr, nr, y, ldy, e, i0, j0);
    return;
    tile_portable(k2, a, b, mr, nr, y, ldy, e, i0, j0);
}

/* Both A panels are [k group][row r < 6][4 bytes] (a quad of int8, or a pair of int16): from 4 vectors of rows
 * 0..3 and 2 of rows 4, 5 (4 groups each), a 4x4 transpose of 32-bit units makes 4 groups of 24 bytes */
static inline __attribute__((always_inline)) void store_groups(int32x4_t r0, int32x4_t r1, int32x4_t r2,
                                                               int32x4_t r3, int32x4_t r4, int32x4_t r5,
                                                               int8_t *dst) {
    const int32x4x2_t t = vtrnq_s32(r0, r1), u = vtrnq_s32(r2, r3), z = vzipq_s32(r4, r5);
    vst1q_s32((int32_t *)dst, vcombine_s32(vget_low_s32(t.val[0]), vget_low_s32(u.val[0])));
    vst1_s32((int32_t *)(dst + 16), vget_low_s32(z.val[0]));
    vst1q_s32((int32_t *)(dst + 24), vcombine_s32(vget_low_s32(t.val[1]), vget_low_s32(u.val[1])));
    vst1_s32((int32_t *)(dst + 40), vget_high_s32(z.val[0]));
    vst1q_s32((int32_t *)(dst + 48), vcombine_s32(vget_high_s32(t.val[0]), vget_high_s32(u.val[0])));
    vst1_s32((int32_t *)(dst + 64), vget_low_s32(z.val[1]));
    vst1q_s32((int32_t *)(dst + 72), vcombine_s32(vget_high_s32(t.val[1]), vget_high_s32(u.val[1])));
    vst1_s32((int32_t *)(dst + 88), vget_high_s32(z.val[1]));
}

/* the 6 row pointers of a panel of mr rows: rows past mr read row 0 (the tiles never use their lanes) */
static inline __attribute__((always_inline)) void panel_rows(const int8_t *a, long lda, int mr, const int8_t *r[6]) {
    for (int i = 0; i < BE_QMR; i++) r[i] = a + (i < mr ? i : 0) * lda;
}

#ifdef BE_ISA_DOTPROD
/* rows i0 .. i0+mr-1 of A (raw int8) as one A panel of int8 quads: 16 k of every row at a time while whole
 * 16-byte loads stay within kread (past K they meet only B's zero padding) and 4 quads stay within the panel's
 * k4, the rest one byte at a time, zero past K */
static void pack_a_quads(const int8_t *a, long lda, long K, long kread, int mr, int8_t *dst) {
    const long k4 = (K + 3) / 4;
    const int8_t *r[BE_QMR];
    panel_rows(a, lda, mr, r);
    long kq = 0;
    for (; kq + 4 <= k4 && 4 * kq + 16 <= kread; kq += 4) {
        const long k = 4 * kq;
#define LDQ(i) vreinterpretq_s32_s8(vld1q_s8(r[i] + k))
        store_groups(LDQ(0), LDQ(1), LDQ(2), LDQ(3), LDQ(4), LDQ(5), dst + kq * 24);
#undef LDQ
    }
    for (; kq < k4; kq++)
        for (int i = 0; i < BE_QMR; i++)
            for (int j = 0; j < 4; j++) dst[kq * 24 + i * 4 + j] = 4 * kq + j < K ? r[i][4 * kq + j] : 0;
}
#endif

/* rows i0 .. i0+mr-1 of A minus zp as one A panel of int16 pairs: 8 k of every row at a time (vsubl_s8: exact)
 * while whole 8-byte loads stay within kread and 4 pairs within the panel's k2, the rest one pair at a time,
 * zero past K (x86: the same; junk past K meets only B's zero padding) */
static void pack_a_rows(const int8_t *a, long lda, long K, long kread, int32_t zp, int mr, int16_t *dst) {
    const long k2 = (K + 1) / 2;
    const int8_t *r[BE_QMR];
    const int8x8_t z8 = vdup_n_s8((int8_t)zp);
    panel_rows(a, lda, mr, r);
    long kp = 0;
    for (; kp + 4 <= k2 && 2 * kp + 8 <= kread; kp += 4) {
        const long k = 2 * kp;
#define LDP(i) vreinterpretq_s32_s16(vsubl_s8(vld1_s8(r[i] + k), z8))
        store_groups(LDP(0), LDP(1), LDP(2), LDP(3), LDP(4), LDP(5), (int8_t *)(dst + kp * BE_QMR * 2));
#undef LDP
    }
    for (; kp < k2; kp++) {
        int16_t *d = dst + kp * BE_QMR * 2;
        const long k = 2 * kp;
        for (int i = 0; i < BE_QMR; i++) {
            d[2 * i] = (int16_t)(r[i][k] - zp);
            d[2 * i + 1] = (int16_t)(k + 1 < K ? r[i][k + 1] - zp : 0);
        }
    }
}

#ifdef BE_ISA_DOTPROD
/* raw int8 A (no zero point) as quads for the sdot tile; else the int16 tile takes A - a_zp */
#define QG_A_QUADS a_zp == 0
#define QG_PACK_QUADS()                                                                                                \
    if (quads)                                                                                                         \
        pack_a_quads(a + i0 * lda, lda, K, K, mr, (int8_t *)ap);                                                          \
    else
#define QG_TILE_QUADS()                                                                                                \
    if (quads) {                                                                                                       \
        be_qgemm_tile_sdot(k2, (const int8_t *)ap, bpack + q * k2 * 32, 0, mr, nr, y + i0 * ldy + j0, ldy, e, i0, j0); \
        continue;                                                                                                      \
    }
#define QG_PANEL_PACK() pack_a_quads(a, lda, K, kread, mr, (int8_t *)apanel)
#define QG_PANEL_TILE()                                                                                                \
    be_qgemm_tile_sdot(k2, (const int8_t *)apanel, bpack + q * k2 * 32, 0, mr, nr, y + j0, ldy, e, i0, j0)
#else
#define QG_A_QUADS 0
#define QG_PACK_QUADS()
#define QG_TILE_QUADS()
#define QG_PANEL_PACK() pack_a_rows(a, lda, K, kread, 0, mr, (int16_t *)apanel)
#define QG_PANEL_TILE() be_qgemm_tile(k2, (const int16_t *)apanel, bpack + q * k2 * 32, mr, nr, y + j0, ldy, e, i0, j0)
#endif

#include "qgemm_loops.h"
