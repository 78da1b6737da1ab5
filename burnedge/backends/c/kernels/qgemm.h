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

/* QMatMul of a few rows without scratch (reference/qgemv.c): row by row straight from A (raw int8, a_zp folded into
 * the bias by the lowering), the same B panels and epilogue as be_qgemm_i8 and its results bit for bit. */
void be_qgemv_i8(long M, long N, long K, const int8_t *a, long lda, const int8_t *bpack, int8_t *y, long ldy,
                 const be_qepi *e);

/* One row panel against every column panel: rows r < mr (<= BE_QMR) of raw int8 A (row r at a + r*lda, K values)
 * times all N columns of B panels `bpack`, to y[r*ldy + c] with the epilogue's channel of column c (per_col) or of
 * row i0 + r. The panel is packed into `apanel` (be_qgemm_panel_bytes(K)) as int16 pairs, or int8 quads for the
 * sdot tile. kread >= K: how far each row may be read (K + 16: whole 16-byte loads past K, no copies of the row
 * ends). Used by the channels-last convolutions (qconv_nhwc.c): rows = output pixels, columns = channels. */
void be_qgemm_panel(const int8_t *a, long lda, long K, long kread, int mr, long N, const int8_t *bpack, int8_t *y,
                    long ldy, const be_qepi *e, long i0, void *apanel);
static inline long be_qgemm_panel_bytes(long K) { return ((K + 3) / 4) * 2 * BE_QMR * 4 + 64; }

#endif
