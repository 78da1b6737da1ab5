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
#include "arm_qgemm.h"
#include "qconv_im2col.h"

#ifdef BE_ISA_DOTPROD
/* rows 4kq .. 4kq+3 of a K x 16 block interleaved into a quad panel: dst[kq*64 + 4c + j] = row(4kq + j)[c] */
static void interleave(const int8_t *rows, long ld, long K, int8_t *dst) {
    const long k4 = (K + 3) / 4;
    const int8x16_t z = vdupq_n_s8(0);
    for (long kq = 0; kq < k4; kq++) {
        const long k = 4 * kq;
        const int8_t *r0 = rows + k * ld;
        const int8x16_t v0 = vld1q_s8(r0), v1 = k + 1 < K ? vld1q_s8(r0 + ld) : z;
        const int8x16_t v2 = k + 2 < K ? vld1q_s8(r0 + 2 * ld) : z, v3 = k + 3 < K ? vld1q_s8(r0 + 3 * ld) : z;
        const int8x16x2_t p = vzipq_s8(v0, v1), q = vzipq_s8(v2, v3);
        const int16x8x2_t lo = vzipq_s16(vreinterpretq_s16_s8(p.val[0]), vreinterpretq_s16_s8(q.val[0]));
        const int16x8x2_t hi = vzipq_s16(vreinterpretq_s16_s8(p.val[1]), vreinterpretq_s16_s8(q.val[1]));
        int8_t *d = dst + kq * 64;
        vst1q_s8(d, vreinterpretq_s8_s16(lo.val[0]));
        vst1q_s8(d + 16, vreinterpretq_s8_s16(lo.val[1]));
        vst1q_s8(d + 32, vreinterpretq_s8_s16(hi.val[0]));
        vst1q_s8(d + 48, vreinterpretq_s8_s16(hi.val[1]));
    }
}
#define PANEL_BYTES(K) be_qconv_pstride(K)
#else
/* rows (2kp, 2kp+1) of a K x 16 block (row k at rows + k*ld) interleaved into a B panel */
#define PANEL_BYTES(K) (((K) + 1) / 2 * 32)
static void interleave(const int8_t *rows, long ld, long K, int8_t *dst) {
    const long k2 = (K + 1) / 2;
    for (long kp = 0; kp < k2; kp++) {
        const int8_t *r0 = rows + 2 * kp * ld;
        int8_t *d = dst + kp * 32;
        const int8x16_t v0 = vld1q_s8(r0), v1 = 2 * kp + 1 < K ? vld1q_s8(r0 + ld) : vdupq_n_s8(0);
        const int8x16x2_t z = vzipq_s8(v0, v1);
        vst1q_s8(d, z.val[0]);
        vst1q_s8(d + 16, z.val[1]);
    }
}
#endif

#ifdef BE_ISA_DOTPROD
static inline __attribute__((always_inline)) void weight_panel(const int16_t *wp, long k2, int8_t *aq) {
    be_qa_quads(wp, k2, aq);
}

static inline __attribute__((always_inline)) void panel_tile(long k2, const int16_t *wp, const int8_t *aq,
                                                            const int8_t *b, int mr, int nr, int8_t *y, long ldy,
                                                            const be_qepi *e, long i0, long j0) {
    (void)wp;
    be_qgemm_tile_sdot(k2, aq, b, 1, mr, nr, y, ldy, e, i0, j0);
}
#else
static inline __attribute__((always_inline)) void weight_panel(const int16_t *wp, long k2, int8_t *aq) {
    (void)wp, (void)k2, (void)aq; /* the tile reads the int16-pair panel itself */
}

static inline __attribute__((always_inline)) void panel_tile(long k2, const int16_t *wp, const int8_t *aq,
                                                            const int8_t *b, int mr, int nr, int8_t *y, long ldy,
                                                            const be_qepi *e, long i0, long j0) {
    (void)aq;
    be_qgemm_tile(k2, wp, b, mr, nr, y, ldy, e, i0, j0);
}
#endif

#include "qconv_loops.h"
