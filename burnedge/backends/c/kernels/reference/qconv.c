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
#include "qconv_im2col.h"

/* rows (2kp, 2kp+1) of a K x 16 block (row k at rows + k*ld) interleaved into a B panel */
#define PANEL_BYTES(K) (((K) + 1) / 2 * 32)
static void interleave(const int8_t *rows, long ld, long K, int8_t *dst) {
    const long k2 = (K + 1) / 2;
    for (long kp = 0; kp < k2; kp++) {
        const int8_t *r0 = rows + 2 * kp * ld;
        int8_t *d = dst + kp * 32;
        for (int c = 0; c < BE_QNR; c++) {
            d[2 * c] = r0[c];
            d[2 * c + 1] = 2 * kp + 1 < K ? r0[ld + c] : 0;
        }
    }
}

static inline __attribute__((always_inline)) void weight_panel(const int16_t *wp, long k2, int8_t *aq) {
    (void)wp, (void)k2, (void)aq; /* the tile reads the int16-pair panel itself */
}

static inline __attribute__((always_inline)) void panel_tile(long k2, const int16_t *wp, const int8_t *aq,
                                                            const int8_t *b, int mr, int nr, int8_t *y, long ldy,
                                                            const be_qepi *e, long i0, long j0) {
    (void)aq;
    be_qgemm_tile(k2, wp, b, mr, nr, y, ldy, e, i0, j0);
}

#include "qconv_loops.h"
